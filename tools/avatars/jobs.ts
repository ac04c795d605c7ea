// The daily cleanup of avatar uploads: a link is valid 15 minutes, so a day after it was issued an
// upload that was never confirmed never will be (its row and object go), and the object a link may
// have written again after its confirmation is never served (it goes too). Declared by the area
// (index.ts `jobs`, `schedules`).
import { and, gte, isNotNull, isNull, lt } from 'drizzle-orm';
import { z } from 'zod';
import { dailyJob } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { avatars } from './tables.ts';

const cleanupPayload = z.object({});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** The daily removal of avatar uploads never confirmed, and of objects written after a confirmation. */
    'avatars.cleanup': z.output<typeof cleanupPayload>;
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * One pass; answers how many unconfirmed uploads it removed. Pending rows issued more than a day
 * ago go first (so a late confirmation finds no row and keeps nothing), then their objects; the
 * upload objects of the avatars confirmed from links issued the day before go too (deleting a
 * missing object is no error), which covers every link once when the job runs daily.
 */
export async function cleanupAvatarUploads(services: Services, now = new Date()): Promise<number> {
  const db = services.db.system;
  const dayAgo = new Date(now.getTime() - DAY_MS);
  const stale = await db
    .delete(avatars)
    .where(and(isNull(avatars.confirmedAt), lt(avatars.createdAt, dayAgo)))
    .returning({ uploadKey: avatars.uploadKey });
  const confirmed = await db
    .select({ uploadKey: avatars.uploadKey })
    .from(avatars)
    .where(
      and(
        isNotNull(avatars.confirmedAt),
        lt(avatars.createdAt, dayAgo),
        gte(avatars.createdAt, new Date(dayAgo.getTime() - DAY_MS)),
      ),
    );
  for (const { uploadKey } of [...stale, ...confirmed]) await services.files.delete(uploadKey);
  return stale.length;
}

export const avatarsCleanup = dailyJob({
  name: 'avatars.cleanup',
  payload: cleanupPayload,
  daily: {},
  atUtc: '03:40',
  run: (services, _payload, now) => cleanupAvatarUploads(services, now),
  log: { message: 'unconfirmed avatar uploads removed', field: 'removed' },
});
