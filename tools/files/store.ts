// The files area's rules for uploaded files: where an organization's uploads live in the shared
// store, and the check that a key a caller hands back (an email attachment's `storage_key`) is one of
// their organization's uploads and holds what they said. The store is shared by every organization,
// so a key is never trusted for its shape alone: it must lie under the caller's organization and the
// object must exist with the declared size (docs/security.md "Email").
import { randomBytes } from 'node:crypto';
import type { FileStore } from '../../core/storage.ts';
import { isValidFileKey } from '../../core/storage.ts';

/** The purposes this upload link is issued for; avatars have their own link and keys (tools/avatars). */
export const UPLOAD_PURPOSES = ['attachment'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

/** The specification's `MAX_ATTACHMENT_BYTES` for one email attachment: 25 MiB. */
export const MAX_ATTACHMENT_BYTES = 26_214_400;

/** How long an upload link stays valid. */
export const UPLOAD_LINK_SECONDS = 3600;

const FOLDERS: Record<UploadPurpose, string> = { attachment: 'attachments' };

/** `org/<orgId>/<folder>/`: every upload of one organization for one purpose lies under it. */
function uploadPrefix(orgId: string, purpose: UploadPurpose): string {
  return `org/${orgId}/${FOLDERS[purpose]}/`;
}

/**
 * The file name as one key segment: letters, digits, `.`, `_` and `-` kept, anything else `_`,
 * starting with a letter, digit or `_`, at most 100 characters. Only for the key (the original
 * name travels with the attachment); it keeps downloads and logs readable.
 */
function safeFileSegment(filename: string): string {
  const cleaned = filename.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  if (cleaned === '') return 'file';
  return /^[A-Za-z0-9_]/.test(cleaned) ? cleaned : `_${cleaned.slice(0, 99)}`;
}

/** A fresh key `org/<orgId>/<folder>/<random>/<safe file name>`, never chosen by the caller. */
export function newUploadKey(orgId: string, purpose: UploadPurpose, filename: string): string {
  return `${uploadPrefix(orgId, purpose)}${randomBytes(16).toString('hex')}/${safeFileSegment(filename)}`;
}

/** Whether `key` has the shape of an upload of this organization for this purpose. */
export function isUploadKeyOf(orgId: string, purpose: UploadPurpose, key: string): boolean {
  const prefix = uploadPrefix(orgId, purpose);
  if (!key.startsWith(prefix) || !isValidFileKey(key)) return false;
  const rest = key.slice(prefix.length).split('/');
  return rest.length === 2 && /^[0-9a-f]{32}$/.test(rest[0] ?? '');
}

/**
 * Why `key` cannot be used as an upload of `orgId` of `sizeBytes` bytes, as one sentence, or null
 * when it can: it must be such a key, and the stored object must exist with exactly that size.
 */
export async function uploadProblem(
  store: FileStore,
  orgId: string,
  purpose: UploadPurpose,
  key: string,
  sizeBytes: number,
): Promise<string | null> {
  if (!isUploadKeyOf(orgId, purpose, key))
    return 'must be a key returned by POST /api/v1/files/upload-url for your organization';
  const info = await store.head(key);
  if (!info) return 'no file was uploaded under this key';
  if (info.size !== sizeBytes)
    return `the uploaded file has ${info.size} bytes, not the ${sizeBytes} declared in size_bytes`;
  return null;
}
