// The daily cleanup of the authorization server's leftovers: anonymous dynamic registrations that
// were never used (no code ever issued) 24 hours after registering, expired pending requests and
// codes, and refresh tokens past their expiry. Declared by the area (index.ts `jobs`, `schedules`).
import { and, eq, isNull, lt } from 'drizzle-orm';
import { z } from 'zod';
import { dailyJob } from '../../core/jobs.ts';
import type { Services } from '../../core/services.ts';
import { oauthClients, oauthCodes, oauthPendingRequests, oauthRefreshTokens } from './tables.ts';

const cleanupPayload = z.object({});

declare module '../../core/jobs.ts' {
  interface JobCatalog {
    /** The daily removal of unused dynamic registrations and expired authorization state. */
    'oauth.cleanup': z.output<typeof cleanupPayload>;
  }
}

const UNUSED_REGISTRATION_MS = 24 * 60 * 60 * 1000;

/** One pass; answers how many unused registrations it deleted. */
export async function cleanupOauth(services: Services, now = new Date()): Promise<number> {
  const db = services.db.system;
  const removed = await db
    .delete(oauthClients)
    .where(
      and(
        eq(oauthClients.source, 'dcr'),
        isNull(oauthClients.lastUsedAt),
        lt(oauthClients.createdAt, new Date(now.getTime() - UNUSED_REGISTRATION_MS)),
      ),
    )
    .returning({ id: oauthClients.id });
  await db.delete(oauthPendingRequests).where(lt(oauthPendingRequests.expiresAt, now));
  await db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, now));
  await db.delete(oauthRefreshTokens).where(lt(oauthRefreshTokens.expiresAt, now));
  return removed.length;
}

export const oauthCleanup = dailyJob({
  name: 'oauth.cleanup',
  payload: cleanupPayload,
  daily: {},
  atUtc: '03:20',
  run: (services, _payload, now) => cleanupOauth(services, now),
  log: { message: 'unused OAuth client registrations removed', field: 'removed' },
});
