// What opportunities require of the contact they name, as hooks the contacts area runs
// (core/area.ts ContactMovingHook): the contacts area never reads this area's tables.
import { and, count, eq, isNull } from 'drizzle-orm';
import type { ContactMovingHook } from '../../core/area.ts';
import { AppError } from '../../core/errors.ts';
import { opportunities } from './tables.ts';

/**
 * An opportunity names a contact of its own lead, so a contact still named by live opportunities
 * of its current lead cannot move away: the caller re-links or clears those first.
 */
export const refuseMoveOfLinkedContact: ContactMovingHook = async (db, contact) => {
  const [row] = await db
    .select({ n: count() })
    .from(opportunities)
    .where(
      and(
        eq(opportunities.orgId, contact.orgId),
        eq(opportunities.contactId, contact.id),
        eq(opportunities.leadId, contact.leadId),
        isNull(opportunities.deletedAt),
      ),
    );
  const linked = row?.n ?? 0;
  if (linked > 0) {
    throw new AppError('conflict', {
      message: `The contact is the contact of ${linked} opportunit${linked === 1 ? 'y' : 'ies'} of its lead; change their contact_id first`,
    });
  }
};
