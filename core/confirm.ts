// The one `confirm` convention of every tool that sends to the outside world (mail, SMS, calls,
// documents). A tool declares `sends` (core/tool.ts) with how to preview; the pipeline
// (core/invoke.ts) decides per surface whether to act or to preview: REST acts unless the body says
// `"confirm": false`, MCP previews unless `confirm` is `true`. A preview answers `{sent: false,
// preview}` in one shape for every tool and runs in a transaction that is always rolled back, so it
// changes nothing whatever the area's preview code does. docs/security.md "Sending needs a decision".
import { z } from 'zod';
import type { Surface } from './access.ts';

/** The one `confirm` field: a strict boolean (the string "true" is a 400 naming `confirm`). */
export const confirmField = z.boolean().optional().describe('true sends; see the description');

/** Spread into the input shape of a sending tool: `z.strictObject({...idShape, ...confirmShape})`. */
export const confirmShape = { confirm: confirmField };

const amountSchema = z
  .object({
    label: z.string().describe('What the amount is, e.g. "total" or "amount_due"'),
    amount: z.number().describe('The amount in the currency unit'),
    currency: z.string().describe('ISO 4217 currency code'),
  })
  .describe('An amount the message states');

/** What a send would do; the same shape for every sending tool. */
export const sendPreviewSchema = z
  .object({
    action: z.string().describe('One sentence: what confirming would do'),
    sender: z.string().describe('Who it is sent from: the From address (or account) it goes out through'),
    to: z.array(z.string()).describe('The recipients (e-mail addresses or phone numbers)'),
    cc: z.array(z.string()).describe('Copy recipients; empty when none'),
    bcc: z.array(z.string()).describe('Blind copy recipients; empty when none'),
    subject: z.string().describe('The subject line, or the first line of the message'),
    amounts: z.array(amountSchema).describe('The amounts the message states; empty when none'),
    send_at: z
      .string()
      .nullable()
      .describe('When it would go out (ISO 8601); null for at once after confirming'),
    attachments: z.array(z.string()).describe('File names attached; empty when none'),
    details: z
      .array(z.string().describe('One fact'))
      .describe('Further facts worth showing the person before confirming (steps, follow-ups, links)'),
  })
  .describe('What confirming would send; nothing was sent or written');

export type SendPreview = z.output<typeof sendPreviewSchema>;

/**
 * Spread into the output object of a sending tool. Its other fields must be optional: a preview
 * answers only `{sent: false, preview}`.
 */
export const sendResultShape = {
  sent: z.boolean().describe('True when it was sent (or scheduled, or enrolled); false for a preview'),
  preview: sendPreviewSchema
    .optional()
    .describe('Present only when nothing was sent: what confirming would send'),
};

/** The answer of a preview, on either surface. */
export const previewResultSchema = z.object({
  sent: z.literal(false).describe('False: nothing was sent'),
  preview: sendPreviewSchema,
});

/** The rule, in the words both surfaces show (tool descriptions and the OpenAPI document). */
export const CONFIRM_RULE =
  'Sending needs a decision: over MCP nothing is sent unless `confirm` is true (else the answer is ' +
  '{sent: false, preview}, the preview naming sender, recipients and subject); over REST the route sends unless ' +
  'the body says "confirm": false, which answers with that preview and changes nothing.';

/** Whether this call acts (true) or only previews (false), per surface. */
export function actsOn(surface: Surface, confirm: boolean | undefined): boolean {
  return surface === 'rest' ? confirm !== false : confirm === true;
}

const confirmOf = z.object(confirmShape);

/** The parsed `confirm` of a tool input (a sending tool's input always carries the field). */
export function readConfirm(input: unknown): boolean | undefined {
  const parsed = confirmOf.safeParse(input);
  return parsed.success ? parsed.data.confirm : undefined;
}
