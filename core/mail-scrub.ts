// Mail retention: an outgoing mail's content (its text and HTML, which may hold a proposal's public
// link with its raw token, and its attachments, which hold invoice PDFs) is only needed until the
// mail is sent or has failed for good. MAIL_RETENTION_DAYS after that (default 30: long enough to
// answer "what exactly did we send?") a daily job scrubs it: the row keeps its key, recipients,
// subject, status, attempts, Message-ID and times, so a document's delivery history and the
// idempotency of its key stay intact, but the bodies and attachments are gone. Rows still queued or
// sending are never touched.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { rowsOf } from './db/sql.ts';
import { dailyJob } from './jobs.ts';
import type { Services } from './services.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 1000;

const scrubPayload = z.object({
  retentionDays: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Days content is kept; MAIL_RETENTION_DAYS when absent'),
});

declare module './jobs.ts' {
  interface JobCatalog {
    /** Drop the bodies and attachments of outgoing mails sent or failed more than the retention ago. */
    'mail.scrub': z.output<typeof scrubPayload>;
  }
}

/** Scrubs in batches of BATCH rows; returns how many rows lost their content. */
export async function scrubOldMail(
  services: Services,
  retentionDays: number,
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  let total = 0;
  for (;;) {
    const rows = rowsOf(
      await services.db.system.execute(sql`
        update outgoing_mails set
          message = message - 'text' - 'html' - 'headers',
          attachments = '[]'::jsonb
        where id in (
          select id from outgoing_mails
          where status in ('sent', 'failed')
            and updated_at < ${cutoff.toISOString()}
            and (message ? 'text' or message ? 'html' or message ? 'headers' or attachments <> '[]'::jsonb)
          limit ${BATCH}
        )
        returning id`),
    );
    total += rows.length;
    if (rows.length < BATCH) return total;
  }
}

/** Daily at 00:20 UTC; not retried: the next day's run scrubs whatever this one missed. */
export const mailScrub = dailyJob({
  name: 'mail.scrub',
  payload: scrubPayload,
  daily: {},
  atUtc: '00:20',
  run: (services, { retentionDays }, now) =>
    scrubOldMail(services, retentionDays ?? services.config.mailRetentionDays, now),
  log: { message: 'old outgoing mail content scrubbed', field: 'scrubbed', onlyWhenAny: true },
});
