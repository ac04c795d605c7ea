// File tools: a signed link to upload a file straight to the store (the bytes never pass through a
// tool call), under a key the server chooses inside the caller's organization. For now the one
// purpose is an email attachment (handed to schedule_email as `storage_key`), so the tool belongs to
// the email family: the `email.send` permission and the `write:email` scope, like scheduling itself
// (docs/decisions.md "Attachment uploads").
import { z } from 'zod';
import { CONTENT_TYPE, issueUploadLink } from '../../core/storage.ts';
import { NO_NUL, nulMessage, ONE_LINE, oneLineMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { MAX_ATTACHMENT_BYTES, newUploadKey, UPLOAD_LINK_SECONDS, UPLOAD_PURPOSES } from './store.ts';

const uploadLinkSchema = z
  .object({
    upload_url: z.string().describe('PUT the file here, with exactly `headers`, before `expires_at`'),
    method: z.literal('PUT').describe('Always PUT'),
    headers: z
      .object({ 'content-type': z.string().describe('The mime_type asked for') })
      .describe('Headers the upload must carry'),
    key: z
      .string()
      .describe('The storage key of the file: give it as `storage_key` (e.g. of an email attachment)'),
    expires_at: z.string().describe('When the link stops working (ISO 8601)'),
  })
  .describe('A signed upload link');

export const createUploadUrlTool = defineTool({
  name: 'create_upload_url',
  title: 'Get a link to upload a file',
  description:
    'Returns a signed link to upload one file to storage: PUT the bytes to `upload_url` with `headers` within one hour. Pass the answer\'s `key` as `storage_key` with the same `size_bytes` in schedule_email `attachments` (`purpose: "attachment"`, at most 25 MB); it is accepted only once uploaded with exactly that size.',
  input: z.strictObject({
    filename: z
      .string()
      .min(1)
      .max(255)
      .refine(NO_NUL, nulMessage)
      .refine(ONE_LINE, oneLineMessage)
      .describe('Name of the file, 1-255 characters on one line (a safe form of it ends the key)'),
    mime_type: z
      .string()
      .min(1)
      .max(100)
      .regex(CONTENT_TYPE, 'must be a media type with optional parameters, e.g. application/pdf')
      .describe('Media type of the file, 1-100 characters, e.g. application/pdf; the upload must send it'),
    size_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_ATTACHMENT_BYTES)
      .describe('Size of the file in bytes, 1 to 26214400; the upload may not be larger'),
    purpose: z.enum(UPLOAD_PURPOSES).describe('What the file is for: "attachment" (of a scheduled email)'),
  }),
  output: uploadLinkSchema,
  access: { kind: 'write', resource: 'email', permission: 'email.send' },
  annotations: { idempotentHint: false },
  toolset: 'email',
  async handler(input, ctx) {
    const key = newUploadKey(ctx.auth.orgId, input.purpose, input.filename);
    return issueUploadLink(ctx.services.files, key, {
      contentType: input.mime_type,
      maxBytes: input.size_bytes,
      expiresIn: UPLOAD_LINK_SECONDS,
    });
  },
});

export const fileTools = [createUploadUrlTool];
