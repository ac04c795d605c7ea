// Avatar tools: a signed link to upload a user's or the organization's picture straight to storage,
// and the confirmation that checks the stored bytes and sets `avatar_url`. Both are in the `users`
// scope family whatever the target (docs/decisions.md "Avatars"); who may set whose avatar is the
// store's rule (assertMayTarget). This file declares the tools; the rules are store.ts.
import { z } from 'zod';
import type { RoleTable } from '../../core/access.ts';
import { organizationSchema } from '../../core/organizations.ts';
import { objectId } from '../../core/schemas.ts';
import { issueUploadLink } from '../../core/storage.ts';
import { NO_NUL, nulMessage, ONE_LINE, oneLineMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import { userSchema } from '../../core/users.ts';
import {
  AVATAR_TYPES,
  AVATAR_UPLOAD_SECONDS,
  type AvatarTarget,
  assertMayTarget,
  avatarUrl,
  checkedCopy,
  confirmAvatar,
  insertPendingAvatar,
  MAX_AVATAR_BYTES,
  removeAvatar,
  TARGET_TYPES,
  uploadOf,
} from './store.ts';

const targetShape = {
  target_type: z
    .enum(TARGET_TYPES)
    .describe('Whose avatar: "user" (a user of your organization) or "organization" (its logo)'),
  target_id: objectId('target').describe(
    'The user\'s `_id`, or your organization\'s `_id` for target_type "organization" (see get_me)',
  ),
};

const uploadLinkSchema = z
  .object({
    upload_url: z.string().describe('PUT the image here, with exactly `headers`, before `expires_at`'),
    method: z.literal('PUT').describe('Always PUT'),
    headers: z
      .object({ 'content-type': z.string().describe('The mime_type asked for') })
      .describe('Headers the upload must carry'),
    key: z.string().describe('The storage key of the upload: pass it to confirm_avatar_upload'),
    expires_at: z.string().describe('When the link stops working (ISO 8601), 15 minutes after it was issued'),
  })
  .describe('A signed upload link for an avatar');

const access = { kind: 'write', resource: 'users', permission: null } as const;

const targetOutput = z
  .object({
    user: userSchema.optional().describe('The user with its avatar_url (target_type "user")'),
    organization: organizationSchema
      .optional()
      .describe('The organization with its avatar_url (target_type "organization")'),
  })
  .describe('The target, with its avatar_url');

const RULES =
  "You may set your own user's avatar; another user's needs the users.edit permission (admins); the organization's, the owner role.";

/** The tools, built with a getter of the role table (tools/index.ts CATALOGUE) for the users.edit check. */
export function avatarTools(roles: () => RoleTable) {
  const createAvatarUploadUrl = defineTool({
    name: 'create_avatar_upload_url',
    title: 'Get a link to upload an avatar',
    description:
      "Step 1 of setting a user's or the organization's avatar: returns a signed link, valid 15 minutes, to PUT one PNG, JPEG or WEBP image (at most 5 MB) to storage: PUT exactly `size_bytes` bytes to `upload_url` with `headers`, then call confirm_avatar_upload with `key` and the same target. Your own avatar: anyone; another user's: users.edit; the organization's: owner.",
    errors: [{ code: 'not_found', when: 'the target user or organization is not one of your organization' }],
    input: z.strictObject({
      filename: z
        .string()
        .min(1)
        .max(255)
        .refine(NO_NUL, nulMessage)
        .refine(ONE_LINE, oneLineMessage)
        .describe('Name of the image file, 1-255 characters on one line (informative only)'),
      mime_type: z
        .enum(AVATAR_TYPES, { error: 'must be image/png, image/jpeg or image/webp' })
        .describe('Type of the image: image/png, image/jpeg or image/webp; the upload must send it'),
      size_bytes: z
        .number()
        .int()
        .min(1)
        .max(MAX_AVATAR_BYTES)
        .describe('Exact size of the image in bytes, 1 to 5242880 (5 MiB); the stored file must have it'),
      ...targetShape,
    }),
    output: uploadLinkSchema,
    access,
    toolset: 'avatars',
    async handler(input, ctx) {
      const target: AvatarTarget = { type: input.target_type, id: input.target_id };
      await assertMayTarget(ctx.db, ctx.auth, roles(), target);
      const key = await insertPendingAvatar(
        ctx.db,
        ctx.auth,
        { target, contentType: input.mime_type, sizeBytes: input.size_bytes },
        ctx.now,
      );
      return issueUploadLink(ctx.services.files, key, {
        contentType: input.mime_type,
        maxBytes: input.size_bytes,
        expiresIn: AVATAR_UPLOAD_SECONDS,
      });
    },
  });

  const confirmAvatarUpload = defineTool({
    name: 'confirm_avatar_upload',
    title: 'Confirm an uploaded avatar',
    description:
      "Step 2: checks the image uploaded under `key` (from create_avatar_upload_url, same target) and makes it the avatar; returns the user or organization with its new public `avatar_url`. A file whose size or image type does not match the declared ones is deleted and the answer is 400 naming `key` (upload again). The previous avatar is deleted. Your own avatar: anyone; another user's: users.edit; the organization's: owner.",
    errors: [{ code: 'not_found', when: 'the target user or organization is not one of your organization' }],
    input: z.strictObject({
      key: z
        .string()
        .min(1)
        .max(512)
        .describe(
          'The `key` answered by create_avatar_upload_url, after the image was PUT to its upload_url',
        ),
      ...targetShape,
    }),
    output: targetOutput,
    access,
    annotations: { idempotentHint: true },
    toolset: 'avatars',
    // The store's copy, HEAD and first-bytes read are network calls on S3: outside the transaction.
    async outside(input, ctx) {
      const target: AvatarTarget = { type: input.target_type, id: input.target_id };
      const upload = await ctx.read(async (db) => {
        await assertMayTarget(db, ctx.auth, roles(), target);
        return uploadOf(db, ctx.auth.orgId, input.key, target);
      });
      // Confirmed already: the answer is the target as it is (idempotent), nothing to check.
      if (upload.confirmedAt !== null) return { storedKey: null };
      return { storedKey: await checkedCopy(ctx.services.files, ctx.auth.orgId, upload) };
    },
    async handler(input, ctx) {
      const { storedKey } = ctx.outside;
      const files = ctx.services.files;
      try {
        const target: AvatarTarget = { type: input.target_type, id: input.target_id };
        await assertMayTarget(ctx.db, ctx.auth, roles(), target);
        const upload = await uploadOf(ctx.db, ctx.auth.orgId, input.key, target);
        const url = avatarUrl(ctx.services.config.publicBaseUrl, upload.id);
        const done = await confirmAvatar(ctx.db, ctx.auth.orgId, upload, storedKey, url, ctx.now);
        if (done.confirmed) {
          // The upload's own object is no longer needed; the old picture goes once the new one is
          // committed (its URL already answers 404).
          const replaced = done.replacedKey;
          ctx.afterCommit(async () => {
            await Promise.all([
              files.delete(upload.uploadKey),
              replaced ? files.delete(replaced) : undefined,
            ]);
          });
        } else if (storedKey !== null) {
          // A concurrent confirmation of the same key won: this call's copy is not used.
          ctx.afterCommit(() => files.delete(storedKey));
        }
        return done.record;
      } catch (err) {
        // Nothing will serve this call's copy; the error itself goes on to the caller.
        if (storedKey !== null) await files.delete(storedKey);
        throw err;
      }
    },
  });

  const removeAvatarTool = defineTool({
    name: 'remove_avatar',
    title: 'Remove an avatar',
    description:
      "Removes a user's or the organization's avatar: `avatar_url` becomes null, the stored image is deleted and its " +
      'URL answers 404. Removing when there is none changes nothing. ' +
      RULES,
    errors: [{ code: 'not_found', when: 'the target user or organization is not one of your organization' }],
    input: z.strictObject(targetShape),
    output: targetOutput,
    access,
    annotations: { destructiveHint: true, idempotentHint: true },
    toolset: 'avatars',
    async handler(input, ctx) {
      const target: AvatarTarget = { type: input.target_type, id: input.target_id };
      await assertMayTarget(ctx.db, ctx.auth, roles(), target);
      const { record, removedKey } = await removeAvatar(ctx.db, ctx.auth.orgId, target, ctx.now);
      if (removedKey !== null) ctx.afterCommit(() => ctx.services.files.delete(removedKey));
      return record;
    },
  });

  return [createAvatarUploadUrl, confirmAvatarUpload, removeAvatarTool] as const;
}
