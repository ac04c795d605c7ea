// The avatars store: who may set whose avatar, the keys avatars are uploaded under, the check of
// the stored bytes (size and leading bytes, on a copy no upload link can change), and the switch of
// a target's `avatar_url` to a newly confirmed upload. The stored object is never trusted for what
// the client declared: its size is read from the store and its kind from its first bytes
// (docs/security.md "Files and secrets at rest").
import { randomBytes } from 'node:crypto';
import { and, eq, isNotNull } from 'drizzle-orm';
import { type RoleTable, roleHas } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { organizations, users } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { getOrganization, type OrganizationRecord, serializeOrganization } from '../../core/organizations.ts';
import type { FileStore } from '../../core/storage.ts';
import { getLiveUser, lockLiveUser, serializeUser, type UserRecord } from '../../core/users.ts';
import { type AvatarRow, avatars } from './tables.ts';

/** The image types an avatar may have. */
export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type AvatarType = (typeof AVATAR_TYPES)[number];

/** What an avatar is the picture of. */
export const TARGET_TYPES = ['user', 'organization'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/** 5 MiB: the largest avatar. */
export const MAX_AVATAR_BYTES = 5_242_880;

/** How long an upload link stays valid: 15 minutes. */
export const AVATAR_UPLOAD_SECONDS = 900;

/** How long the download link an avatar URL redirects to stays valid: 10 minutes. */
export const AVATAR_VIEW_SECONDS = 600;

/**
 * How long a browser may reuse the redirect: well inside the link's lifetime, so a cached redirect
 * never points at an expired link, and short enough that a replaced avatar shows within minutes.
 */
export const AVATAR_REDIRECT_CACHE_SECONDS = 300;

const EXTENSIONS: Record<AvatarType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
};

/** An avatar's public id: 128 random bits as 32 hex characters, unguessable (its URL needs no token). */
const AVATAR_ID = /^[0-9a-f]{32}$/;

const random128 = () => randomBytes(16).toString('hex');

/** `org/<orgId>/avatars/<32 hex>.<ext>`: a fresh key, never chosen by the caller. */
function newAvatarKey(orgId: string, type: AvatarType): string {
  return `org/${orgId}/avatars/${random128()}.${EXTENSIONS[type]}`;
}

/** The stable URL of an avatar: PUBLIC_BASE_URL + /avatars/<id>, served without a token. */
export function avatarUrl(publicBaseUrl: string, id: string): string {
  return `${publicBaseUrl}/avatars/${id}`;
}

/** How many leading bytes tell the three image types apart. */
const MAGIC_BYTES = 12;

/**
 * The image type the leading bytes show, or null for anything else: PNG `89 50 4E 47 0D 0A 1A 0A`,
 * JPEG `FF D8 FF`, WEBP `RIFF` <4 bytes of size> `WEBP`.
 */
function imageTypeOf(start: Uint8Array): AvatarType | null {
  const starts = (offset: number, bytes: readonly number[]) =>
    start.length >= offset + bytes.length && bytes.every((b, i) => start[offset + i] === b);
  if (starts(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts(0, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts(0, [0x52, 0x49, 0x46, 0x46]) && starts(8, [0x57, 0x45, 0x42, 0x50])) return 'image/webp';
  return null;
}

export interface AvatarTarget {
  type: TargetType;
  id: string;
}

function keyProblem(message: string): AppError {
  return new AppError('validation_failed', { details: [{ field: 'key', message, code: 'invalid' }] });
}

/**
 * Checks that the caller may set the avatar of `target`, in the caller's tenant: their own user
 * always; another user of the organization with `users.edit`; the organization itself only as its
 * owner. A user or organization the tenant cannot see is a 404, before any 403, so another
 * organization's ids answer as if they did not exist.
 */
export async function assertMayTarget(
  db: Executor,
  auth: AuthContext,
  access: RoleTable,
  target: AvatarTarget,
): Promise<void> {
  if (target.type === 'user') {
    if (target.id !== auth.userId) {
      await getLiveUser(db, auth.orgId, target.id);
      if (!roleHas(access, auth.role, 'users.edit'))
        throw new AppError('forbidden', {
          message: "Setting another user's avatar needs the users.edit permission",
          extra: { required_permission: 'users.edit' },
        });
    }
    return;
  }
  if (target.id !== auth.orgId) throw new AppError('not_found', { message: 'Organization not found' });
  if (auth.role !== 'owner')
    throw new AppError('forbidden', { message: "Only the owner may set the organization's avatar" });
}

/** Writes the pending upload of an avatar and answers its key; the link is signed by the caller. */
export async function insertPendingAvatar(
  db: Executor,
  auth: AuthContext,
  input: { target: AvatarTarget; contentType: AvatarType; sizeBytes: number },
  now: Date,
): Promise<string> {
  const key = newAvatarKey(auth.orgId, input.contentType);
  await db.insert(avatars).values({
    id: random128(),
    orgId: auth.orgId,
    targetType: input.target.type,
    targetId: input.target.id,
    uploadKey: key,
    contentType: input.contentType,
    sizeBytes: input.sizeBytes,
    createdBy: auth.userId,
    createdAt: now,
    updatedAt: now,
  });
  return key;
}

/**
 * The avatar upload `key` names for `target` in the caller's organization, or a 400 naming `key`:
 * another organization's key is invisible under row-level security and answers the same.
 */
export async function uploadOf(
  db: Executor,
  orgId: string,
  key: string,
  target: AvatarTarget,
): Promise<AvatarRow> {
  const [row] = await db
    .select()
    .from(avatars)
    .where(and(eq(avatars.orgId, orgId), eq(avatars.uploadKey, key)))
    .limit(1);
  if (!row)
    throw keyProblem(
      'must be a key returned by POST /api/v1/files/avatar/upload-url for your organization (and not replaced since)',
    );
  if (row.targetType !== target.type || row.targetId !== target.id)
    throw keyProblem(`was issued for the avatar of another ${row.targetType}, not of this ${target.type}`);
  return row;
}

/**
 * Checks a pending upload and answers the key of its checked copy. The uploaded object is first
 * copied inside the store to a fresh key no link names, and the copy is what is checked and served:
 * an upload link stays valid for its 15 minutes, and bytes PUT through it after the check must not
 * change the avatar. The copy must have exactly the declared size (at most 5 MiB) and start with
 * the bytes of the declared image type; otherwise the upload and the copy are deleted, so they can
 * never become an avatar, and the answer is a 400 naming `key`. Runs outside the request's
 * transaction (network calls to the store).
 */
export async function checkedCopy(store: FileStore, orgId: string, upload: AvatarRow): Promise<string> {
  const type = avatarType(upload.contentType);
  const copy = newAvatarKey(orgId, type);
  if (!(await store.copy(upload.uploadKey, copy)))
    throw keyProblem('no file was uploaded under this key (PUT it to upload_url first)');
  const refuse = async (message: string) => {
    await Promise.all([store.delete(copy), store.delete(upload.uploadKey)]);
    return keyProblem(`${message}; it was deleted`);
  };
  const info = await store.head(copy);
  if (!info) throw keyProblem('the uploaded file went away while it was checked');
  if (info.size > MAX_AVATAR_BYTES || info.size !== upload.sizeBytes)
    throw await refuse(
      `the uploaded file has ${info.size} bytes, not the ${upload.sizeBytes} declared in size_bytes (at most ${MAX_AVATAR_BYTES})`,
    );
  const shown = imageTypeOf((await store.readStart(copy, MAGIC_BYTES)) ?? new Uint8Array(0));
  if (shown === null)
    throw await refuse(
      `the uploaded file is not a PNG, JPEG or WEBP image (its first bytes say so), though ${type} was declared`,
    );
  if (shown !== type)
    throw await refuse(
      `the uploaded file is ${shown} by its first bytes, not the ${type} declared in mime_type`,
    );
  return copy;
}

function avatarType(contentType: string): AvatarType {
  const type = AVATAR_TYPES.find((t) => t === contentType);
  if (!type) throw new Error(`avatar upload with content type ${contentType}`);
  return type;
}

export type ConfirmedTarget = { user: UserRecord } | { organization: OrganizationRecord };

async function targetRecord(db: Executor, orgId: string, target: AvatarTarget): Promise<ConfirmedTarget> {
  if (target.type === 'user') {
    const [row] = await db
      .select()
      .from(users)
      .where(and(eq(users.orgId, orgId), eq(users.id, target.id)));
    if (!row) throw new AppError('not_found', { message: 'User not found' });
    return { user: serializeUser(row) };
  }
  return { organization: serializeOrganization(await getOrganization(db, orgId)) };
}

/**
 * Makes a checked upload the target's avatar, served from `storedKey` (its checked copy): the
 * target's previous avatar row goes (its object is returned for deletion after the commit), the
 * upload is confirmed, and the target's `avatar_url` points at it. Confirming the current avatar
 * again changes nothing (`confirmed` false: the caller's copy is not used).
 */
export async function confirmAvatar(
  db: Executor,
  orgId: string,
  upload: AvatarRow,
  storedKey: string | null,
  url: string,
  now: Date,
): Promise<{ record: ConfirmedTarget; confirmed: boolean; replacedKey: string | null }> {
  const target: AvatarTarget = {
    type: upload.targetType === 'user' ? 'user' : 'organization',
    id: upload.targetId,
  };
  // The target first, then the upload: every change of one target's avatar takes the same locks in
  // the same order, so two of them take turns instead of both replacing "the previous" avatar.
  await lockTarget(db, orgId, target);
  const [fresh] = await db.select().from(avatars).where(eq(avatars.id, upload.id)).for('update');
  if (!fresh) throw keyProblem('the upload was replaced by another avatar meanwhile');
  if (fresh.confirmedAt !== null)
    return { record: await targetRecord(db, orgId, target), confirmed: false, replacedKey: null };
  if (storedKey === null) throw new Error(`avatar upload ${upload.id} confirmed without a checked copy`);
  const replacedKey = await dropCurrent(db, orgId, target);
  await db
    .update(avatars)
    .set({ storedKey, confirmedAt: now, updatedAt: now })
    .where(eq(avatars.id, upload.id));
  await setAvatarUrl(db, orgId, target, url, now);
  return { record: await targetRecord(db, orgId, target), confirmed: true, replacedKey };
}

/**
 * Removes the target's avatar: its row goes and `avatar_url` becomes null; answers the target and
 * the key of the stored object to delete after the commit (null when there was no avatar).
 */
export async function removeAvatar(
  db: Executor,
  orgId: string,
  target: AvatarTarget,
  now: Date,
): Promise<{ record: ConfirmedTarget; removedKey: string | null }> {
  await lockTarget(db, orgId, target);
  const removedKey = await dropCurrent(db, orgId, target);
  if (removedKey !== null) await setAvatarUrl(db, orgId, target, null, now);
  return { record: await targetRecord(db, orgId, target), removedKey };
}

/** Locks the target's row (a live user, or the organization) for the rest of the transaction. */
async function lockTarget(db: Executor, orgId: string, target: AvatarTarget): Promise<void> {
  if (target.type === 'user') await lockLiveUser(db, orgId, target.id);
  else
    await db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.id, orgId))
      .for('update');
}

/** Deletes the target's confirmed avatar row, answering its storage key (null when it had none). */
async function dropCurrent(db: Executor, orgId: string, target: AvatarTarget): Promise<string | null> {
  const [current] = await db
    .delete(avatars)
    .where(
      and(
        eq(avatars.orgId, orgId),
        eq(avatars.targetType, target.type),
        eq(avatars.targetId, target.id),
        isNotNull(avatars.confirmedAt),
      ),
    )
    .returning({ storedKey: avatars.storedKey });
  return current?.storedKey ?? null;
}

async function setAvatarUrl(
  db: Executor,
  orgId: string,
  target: AvatarTarget,
  url: string | null,
  now: Date,
): Promise<void> {
  if (target.type === 'user') {
    await db
      .update(users)
      .set({ avatarUrl: url, updatedAt: now })
      .where(and(eq(users.orgId, orgId), eq(users.id, target.id)));
  } else {
    await db.update(organizations).set({ avatarUrl: url, updatedAt: now }).where(eq(organizations.id, orgId));
  }
}

/** The storage key of the avatar a public URL names, found without a tenant (the id is the credential). */
export async function findServedAvatar(system: Executor, id: string): Promise<string | null> {
  if (!AVATAR_ID.test(id)) return null;
  const [row] = await system
    .select({ storedKey: avatars.storedKey })
    .from(avatars)
    .where(and(eq(avatars.id, id), isNotNull(avatars.confirmedAt)))
    .limit(1);
  return row?.storedKey ?? null;
}
