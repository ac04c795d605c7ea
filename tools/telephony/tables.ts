// The telephony area's table: the organization's telephony provider account, one row per
// organization (the primary key is its org_id). The auth token is stored encrypted through the secrets
// port (core/secrets.ts, context `telephony_settings.auth_token:<org_id>`) and never returned; an
// Account SID belongs to one organization (unique), which is how a provider hook finds its tenant.
import { pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, orgId, ts, updatedAt } from '../../core/db/schema.ts';

export const telephonySettings = pgTable(
  'telephony_settings',
  {
    orgId: orgId().primaryKey(),
    provider: text('provider').notNull().default('twilio'),
    accountSid: text('account_sid').notNull(),
    /** Encrypted (core/secrets.ts); never returned. */
    authToken: text('auth_token').notNull(),
    authTokenLast4: text('auth_token_last4').notNull(),
    friendlyName: text('friendly_name'),
    verifiedAt: ts('verified_at').notNull(),
    updatedBy: text('updated_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('telephony_settings_account_sid_idx').on(t.accountSid)],
);

export type TelephonySettingsRow = typeof telephonySettings.$inferSelect;
