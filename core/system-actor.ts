// Acting for a user when no request carries their token: a job that creates a follow-up task for the
// sender of an email, a workflow step that creates a task for the user who enrolled the lead. The
// record helpers (core/records.ts) take a RecordContext with an AuthContext; this builds one from
// the user's current role and the organization's current plan, so what a job does is still bounded
// by what the user may do now (a user deactivated since is no actor at all).
import { and, eq, isNull } from 'drizzle-orm';
import { isRole } from './access.ts';
import type { AuthContext } from './auth-context.ts';
import type { Executor } from './db/client.ts';
import { organizations, users } from './db/schema.ts';
import { recordEvent } from './events.ts';
import type { RecordContext } from './records.ts';

/**
 * The AuthContext of `userId` acting in `orgId` as a session would (no scopes, no credential), read
 * in the caller's tenant transaction; null when the user is not a live, active user of the
 * organization or the organization is not active.
 */
export async function actorAuth(db: Executor, orgId: string, userId: string): Promise<AuthContext | null> {
  const [row] = await db
    .select({ role: users.role, plan: organizations.plan, disabled: organizations.disabledFeatures })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.orgId))
    .where(
      and(
        eq(users.id, userId),
        eq(users.orgId, orgId),
        eq(users.status, 'active'),
        isNull(users.deletedAt),
        eq(organizations.status, 'active'),
      ),
    )
    .limit(1);
  if (!row || !isRole(row.role)) return null;
  return {
    tokenKind: 'session',
    orgId,
    userId,
    role: row.role,
    plan: row.plan,
    disabledFeatures: row.disabled,
    scopes: null,
    credentialId: null,
  };
}

/** A RecordContext acting as `auth`'s user in the tenant transaction `db`; events go to its outbox. */
export function actorContext(db: Executor, auth: AuthContext, now: Date): RecordContext {
  return {
    db,
    auth,
    now,
    emit: async (event, data) => void (await recordEvent(db, auth.orgId, event, data)),
  };
}
