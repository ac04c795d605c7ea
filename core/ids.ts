// Record ids keep MongoDB's ObjectId form (the specification's 24 hex characters): 4 bytes of
// seconds, 5 random bytes fixed per process, and a 3-byte counter. They sort roughly by creation
// time, which keeps btree inserts local and makes `_id` a stable tiebreaker for paging.
import { randomBytes } from 'node:crypto';

const processRandom = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export const OBJECT_ID_PATTERN = /^[0-9a-fA-F]{24}$/;

/** An id's first 4 bytes: the second of `at`, in hex. */
function secondsOf(at: Date): string {
  return Math.floor(at.getTime() / 1000)
    .toString(16)
    .padStart(8, '0');
}

export function newId(now: Date = new Date()): string {
  counter = (counter + 1) % 0x1000000;
  return `${secondsOf(now)}${processRandom}${counter.toString(16).padStart(6, '0')}`;
}

/**
 * The smallest id made at or after `at`'s second: `id < idFloorAt(cutoff)` is the range of a
 * primary key holding exactly the rows made before that second (core/outbox-expiry.ts).
 */
export function idFloorAt(at: Date): string {
  return `${secondsOf(at)}${'0'.repeat(16)}`;
}
