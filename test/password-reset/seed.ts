// Rows the routes cannot make, written straight to the password-reset area's tables: a user's reset
// tokens moved past their expiry (the context has no clock to move), and a request whose wake-up was lost.
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { passwordResetRequests, passwordResetTokens } from '../../tools/password-reset/tables.ts';
import type { TestContext } from '../fixtures/index.ts';

/** Makes every reset token of the user one that expired `agoMs` ago (a second by default). */
export async function expireResetTokensOf(t: TestContext, userId: string, agoMs = 1000): Promise<void> {
  await t.services.db.system
    .update(passwordResetTokens)
    .set({ expiresAt: new Date(Date.now() - agoMs) })
    .where(eq(passwordResetTokens.userId, userId));
}

/** The reset tokens of a user, as stored (hashes only). */
export function resetTokensOf(t: TestContext, userId: string) {
  return t.services.db.system
    .select()
    .from(passwordResetTokens)
    .where(eq(passwordResetTokens.userId, userId));
}

/** Every request row, oldest first. */
export function resetRequests(t: TestContext) {
  return t.services.db.system.select().from(passwordResetRequests).orderBy(passwordResetRequests.requestedAt);
}

/** A request row whose wake-up was lost: written as the route writes it, its job never enqueued. */
export async function seedLostRequest(t: TestContext, email: string, ageMs: number): Promise<string> {
  const id = newId();
  const address = email.trim().toLowerCase();
  await t.services.db.system.insert(passwordResetRequests).values({
    id,
    email: address,
    emailHash: createHash('sha256').update(address).digest('hex'),
    ip: '192.0.2.1',
    requestedAt: new Date(Date.now() - ageMs),
  });
  return id;
}
