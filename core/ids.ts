// Record ids keep MongoDB's ObjectId form (the specification's 24 hex characters): 4 bytes of
// seconds, 5 random bytes fixed per process, and a 3-byte counter. They sort roughly by creation
// time, which keeps btree inserts local and makes `_id` a stable tiebreaker for paging.
import { randomBytes } from 'node:crypto';

const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export const OBJECT_ID_PATTERN = /^[0-9a-fA-F]{24}$/;

export function newId(now: Date = new Date()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(now.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
  return `${seconds}${processRandom}${counter.toString(16).padStart(6, '0')}`;
}
