// Locks in avatars on both file stores (disk served by the app, S3 on a real s3rver): the signed upload link under org/<id>/avatars, the confirmation that checks the stored size and leading bytes (deleting what fails), avatar_url on the user or organization as a stable public URL redirecting to the same bytes, replacement, who may set whose avatar, tenancy and input bounds.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect } from 'vitest';
import { DiskFileStore, deriveFileSigningKey } from '../../core/storage.ts';
import { cleanupAvatarUploads } from '../../tools/avatars/jobs.ts';
import { avatars } from '../../tools/avatars/tables.ts';
import {
  type Caller,
  createTestContext,
  detailFields,
  fileTest,
  readError,
  readOutput,
  type TestContext,
  TOOL,
} from '../fixtures/index.ts';
import { startS3Peer } from '../support/s3-peer.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'crm-avatars-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const avatarTest = fileTest({ env: { DATA_DIR: dataDir }, options: { withoutRateLimits: true } })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
  .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
    const peer = await startS3Peer();
    onCleanup(() => peer.stop());
    return peer;
  })
  .extend('s3', { scope: 'file' }, async ({ peer }, { onCleanup }) => {
    const s3 = await createTestContext(peer.env, { withoutRateLimits: true });
    onCleanup(() => s3.close());
    return s3;
  });

const b64 = (text: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(text, 'base64'));

/** Tiny real images: a 1x1 PNG, a 1x1 JPEG (JFIF) and a 1x1 lossless WEBP. */
const IMAGES = {
  'image/png': b64(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  ),
  'image/jpeg': b64(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  ),
  'image/webp': b64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='),
} as const;
type ImageType = keyof typeof IMAGES;

const MAX = 5_242_880;

type Target = { target_type: 'user' | 'organization'; target_id: string };
const userTarget = (id: string): Target => ({ target_type: 'user', target_id: id });

function uploadUrl(t: TestContext, as: Caller, body: Record<string, unknown>) {
  return t.request('POST', '/api/v1/files/avatar/upload-url', { token: as.token, body });
}

async function linkFor(t: TestContext, as: Caller, target: Target, type: ImageType, size: number) {
  const res = await uploadUrl(t, as, { filename: 'picture', mime_type: type, size_bytes: size, ...target });
  return readOutput(res, TOOL.create_avatar_upload_url);
}

/** A signed link is the disk store's (answered by the app) or the bucket's (over the network). */
function send(t: TestContext, url: string, init?: RequestInit): Promise<Response> {
  return url.startsWith(t.config.publicBaseUrl)
    ? Promise.resolve(t.app.request(url, init))
    : fetch(url, init);
}

function put(
  t: TestContext,
  link: { upload_url: string; headers: Record<string, string> },
  bytes: Uint8Array<ArrayBuffer>,
) {
  return send(t, link.upload_url, { method: 'PUT', headers: link.headers, body: bytes });
}

function confirm(t: TestContext, as: Caller, key: string, target: Target) {
  return t.request('POST', '/api/v1/files/avatar/confirm', { token: as.token, body: { key, ...target } });
}

/** The full flow: link, PUT, confirm; answers the confirmation's output. */
async function setAvatar(t: TestContext, as: Caller, target: Target, type: ImageType = 'image/png') {
  const bytes = IMAGES[type];
  const link = await linkFor(t, as, target, type, bytes.length);
  expect((await put(t, link, bytes)).status).toBe(200);
  const out = await readOutput(await confirm(t, as, link.key, target), TOOL.confirm_avatar_upload);
  return { link, out };
}

/** Follows an avatar URL: its 302, then the signed link it names. */
async function fetchAvatar(t: TestContext, avatarUrl: string) {
  expect(avatarUrl.startsWith(`${t.config.publicBaseUrl}/avatars/`)).toBe(true);
  const redirect = await t.app.request(avatarUrl);
  expect(redirect.status).toBe(302);
  const location = redirect.headers.get('location') ?? '';
  const got = await send(t, location);
  return { redirect, got, bytes: new Uint8Array(await got.arrayBuffer()) };
}

/** The key of the checked copy an avatar URL serves, read back from the area's table. */
async function storedKeyOf(t: TestContext, avatarUrl: string): Promise<string> {
  const id = avatarUrl.slice(avatarUrl.lastIndexOf('/') + 1);
  const [row] = await t.services.db.system
    .select({ storedKey: avatars.storedKey })
    .from(avatars)
    .where(eq(avatars.id, id));
  expect(row?.storedKey).toEqual(expect.any(String));
  return row?.storedKey ?? '';
}

/** Every object the store holds under the organization's avatars folder (disk: the files; S3: a listing). */
async function avatarObjects(t: TestContext, orgId: string): Promise<string[]> {
  const prefix = `org/${orgId}/avatars/`;
  const s3 = t.config.s3;
  if (!s3) {
    const dir = join(dataDir, 'files', prefix);
    return existsSync(dir) ? readdirSync(dir).map((name) => `${prefix}${name.replace(/~$/, '')}`) : [];
  }
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  try {
    const out = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((object) => object.Key ?? '');
  } finally {
    client.destroy();
  }
}

async function member(t: TestContext, orgId: string, role: 'member' | 'admin' | 'viewer' = 'member') {
  const user = await t.createUser(orgId, role);
  return { ...user, caller: { token: user.token } };
}

describe.each(['disk', 's3'] as const)('avatars on the %s store', (store) => {
  avatarTest.for(['image/png', 'image/jpeg', 'image/webp'] as const)(
    "sets the caller's own avatar from a real %s and serves the same bytes through avatar_url",
    async (type, { t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const bytes = IMAGES[type];
      const link = await linkFor(t, org, userTarget(org.ownerId), type, bytes.length);
      expect(link.key).toMatch(new RegExp(`^org/${org.orgId}/avatars/[0-9a-f]{32}\\.(png|jpg|webp)$`));
      expect(link.method).toBe('PUT');
      expect(link.headers).toEqual({ 'content-type': type });
      const lifetime = Date.parse(link.expires_at) - Date.now();
      expect(lifetime).toBeGreaterThan(14 * 60_000);
      expect(lifetime).toBeLessThanOrEqual(15 * 60_000);

      expect((await put(t, link, bytes)).status).toBe(200);
      const out = await readOutput(
        await confirm(t, org, link.key, userTarget(org.ownerId)),
        TOOL.confirm_avatar_upload,
      );
      const avatarUrl = out.user?.avatar_url ?? '';
      expect(avatarUrl).toMatch(new RegExp(`^${t.config.publicBaseUrl}/avatars/[0-9a-f]{32}$`));
      expect(avatarUrl).not.toContain(link.key);
      expect(out.organization).toBeUndefined();

      const got = await readOutput(
        await t.request('GET', `/api/v1/users/${org.ownerId}`, { token: org.token }),
        TOOL.get_user,
      );
      expect(got.user.avatar_url).toBe(avatarUrl);
      const me = await readOutput(await t.request('GET', '/api/v1/me', { token: org.token }), TOOL.get_me);
      expect(me.user.avatar_url).toBe(avatarUrl);
      expect(me.organization.avatar_url).toBeNull();

      const served = await fetchAvatar(t, avatarUrl);
      expect(served.redirect.headers.get('cache-control')).toBe('private, max-age=300');
      expect(served.got.status).toBe(200);
      expect(served.got.headers.get('content-type')).toBe(type);
      expect(Array.from(served.bytes)).toEqual(Array.from(bytes));
    },
  );

  avatarTest(
    'replaces an avatar: the old object and URL go, the new one serves; confirming again answers the same',
    async ({ t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const target = userTarget(org.ownerId);
      const first = await setAvatar(t, org, target, 'image/png');
      const second = await setAvatar(t, org, target, 'image/webp');
      const firstUrl = first.out.user?.avatar_url ?? '';
      const secondUrl = second.out.user?.avatar_url ?? '';
      expect(secondUrl).not.toBe(firstUrl);
      const secondKey = await storedKeyOf(t, secondUrl);
      // Only the new avatar's copy is left: the old copy and both uploads' own objects are gone.
      expect(await avatarObjects(t, org.orgId)).toEqual([secondKey]);
      expect((await t.app.request(firstUrl)).status).toBe(404);
      expect(Array.from((await fetchAvatar(t, secondUrl)).bytes)).toEqual(Array.from(IMAGES['image/webp']));

      const again = await readOutput(
        await confirm(t, org, second.link.key, target),
        TOOL.confirm_avatar_upload,
      );
      expect(again.user?.avatar_url).toBe(secondUrl);
      expect(await avatarObjects(t, org.orgId)).toEqual([secondKey]);
      // The replaced upload's key is no avatar key any more.
      const stale = await readError(await confirm(t, org, first.link.key, target), 400);
      expect(detailFields(stale)).toEqual(['key']);
    },
  );

  avatarTest(
    'serves the checked copy: bytes PUT again through the still valid link after the confirmation change nothing',
    async ({ t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const { link, out } = await setAvatar(t, org, userTarget(org.ownerId), 'image/png');
      const url = out.user?.avatar_url ?? '';
      const script = new Uint8Array(IMAGES['image/png'].length).fill(0x3c);
      expect((await put(t, link, script)).status).toBe(200);
      const served = await fetchAvatar(t, url);
      expect(Array.from(served.bytes)).toEqual(Array.from(IMAGES['image/png']));
    },
  );

  avatarTest(
    "sets the organization's logo as its owner: avatar_url on get_me's organization",
    async ({ t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const target: Target = { target_type: 'organization', target_id: org.orgId };
      const { out } = await setAvatar(t, org, target, 'image/jpeg');
      const logo = out.organization?.avatar_url ?? '';
      expect(out.user).toBeUndefined();
      const me = await readOutput(await t.request('GET', '/api/v1/me', { token: org.token }), TOOL.get_me);
      expect(me.organization.avatar_url).toBe(logo);
      expect(Array.from((await fetchAvatar(t, logo)).bytes)).toEqual(Array.from(IMAGES['image/jpeg']));
    },
  );

  avatarTest(
    'refuses more bytes than declared: the store refuses the PUT or confirm deletes the object',
    async ({ t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const target = userTarget(org.ownerId);
      const png = IMAGES['image/png'];
      const link = await linkFor(t, org, target, 'image/png', 10);
      const sent = await put(t, link, png);
      // The disk store counts the bytes as they come; a presigned S3 PUT cannot bound the size.
      if (store === 'disk') expect(sent.status).toBe(413);
      else expect(sent.status).toBe(200);
      const refused = await readError(await confirm(t, org, link.key, target), 400);
      expect(detailFields(refused)).toEqual(['key']);
      expect(await avatarObjects(t, org.orgId)).toEqual([]);
      const me = await readOutput(await t.request('GET', '/api/v1/me', { token: org.token }), TOOL.get_me);
      expect(me.user.avatar_url).toBeNull();
    },
  );

  avatarTest('refuses fewer bytes than declared, deleting the object', async ({ t: disk, s3 }) => {
    const t = store === 'disk' ? disk : s3;
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const png = IMAGES['image/png'];
    const link = await linkFor(t, org, target, 'image/png', png.length + 5);
    expect((await put(t, link, png)).status).toBe(200);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(detailFields(refused)).toEqual(['key']);
    expect(refused.details?.[0]?.message).toContain(`has ${png.length} bytes`);
    expect(await avatarObjects(t, org.orgId)).toEqual([]);
  });

  avatarTest('refuses a file over 5 MiB whatever was declared', async ({ t: disk, s3 }) => {
    const t = store === 'disk' ? disk : s3;
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const link = await linkFor(t, org, target, 'image/png', MAX);
    const big = new Uint8Array(MAX + 1);
    big.set(IMAGES['image/png']);
    const sent = await put(t, link, big);
    if (store === 'disk') expect(sent.status).toBe(413);
    else expect(sent.status).toBe(200);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(detailFields(refused)).toEqual(['key']);
    expect(await avatarObjects(t, org.orgId)).toEqual([]);
  });

  avatarTest(
    'refuses a text file named .png and declared image/png, deleting it',
    async ({ t: disk, s3 }) => {
      const t = store === 'disk' ? disk : s3;
      const org = await t.createOrg();
      const target = userTarget(org.ownerId);
      const text = new TextEncoder().encode('<svg onload="alert(1)">not a picture</svg>');
      const res = await uploadUrl(t, org, {
        filename: 'me.png',
        mime_type: 'image/png',
        size_bytes: text.length,
        ...target,
      });
      const link = await readOutput(res, TOOL.create_avatar_upload_url);
      expect((await put(t, link, text)).status).toBe(200);
      const refused = await readError(await confirm(t, org, link.key, target), 400);
      expect(detailFields(refused)).toEqual(['key']);
      expect(refused.details?.[0]?.message).toContain('not a PNG, JPEG or WEBP image');
      expect(await avatarObjects(t, org.orgId)).toEqual([]);
    },
  );

  avatarTest('refuses PNG bytes declared as image/jpeg, deleting them', async ({ t: disk, s3 }) => {
    const t = store === 'disk' ? disk : s3;
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const png = IMAGES['image/png'];
    const link = await linkFor(t, org, target, 'image/jpeg', png.length);
    expect((await put(t, link, png)).status).toBe(200);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(detailFields(refused)).toEqual(['key']);
    expect(refused.details?.[0]?.message).toContain('is image/png by its first bytes');
    expect(await avatarObjects(t, org.orgId)).toEqual([]);
  });

  avatarTest('refuses to confirm a key nothing was uploaded under', async ({ t: disk, s3 }) => {
    const t = store === 'disk' ? disk : s3;
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const link = await linkFor(t, org, target, 'image/png', 10);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(detailFields(refused)).toEqual(['key']);
    expect(refused.details?.[0]?.message).toContain('no file was uploaded');
  });

  avatarTest('refuses an upload link once expired', async ({ t: disk, s3, peer }) => {
    const t = store === 'disk' ? disk : s3;
    const org = await t.createOrg();
    const link = await linkFor(t, org, userTarget(org.ownerId), 'image/png', IMAGES['image/png'].length);
    let expired: string;
    if (store === 'disk') {
      // The same signing key and root with a clock an hour behind: its link for the key expired long ago.
      const past = new DiskFileStore({
        root: join(dataDir, 'files'),
        signingKey: deriveFileSigningKey(t.services.jwtKey),
        publicBaseUrl: t.config.publicBaseUrl,
        now: () => Date.now() - 3600_000,
      });
      const signed = await past.signedUploadUrl(link.key, {
        contentType: 'image/png',
        maxBytes: IMAGES['image/png'].length,
        expiresIn: 900,
      });
      expired = signed.url;
    } else {
      // s3rver checks X-Amz-Expires against the signing date, as S3 does: a link signed an hour ago for 15 minutes.
      const client = new S3Client({
        region: peer.env.S3_REGION ?? 'us-east-1',
        endpoint: peer.env.S3_ENDPOINT,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
        requestChecksumCalculation: 'WHEN_REQUIRED',
      });
      expired = await getSignedUrl(
        client,
        new PutObjectCommand({ Bucket: peer.env.S3_BUCKET, Key: link.key, ContentType: 'image/png' }),
        {
          expiresIn: 900,
          signingDate: new Date(Date.now() - 3600_000),
          signableHeaders: new Set(['content-type']),
        },
      );
      client.destroy();
    }
    const res = await send(t, expired, { method: 'PUT', headers: link.headers, body: IMAGES['image/png'] });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/expired/i);
    expect(await avatarObjects(t, org.orgId)).toEqual([]);
  });
});

describe('who may set whose avatar', () => {
  avatarTest(
    "a member sets their own, not another user's (403); an admin sets any user's",
    async ({ t, org }) => {
      const alice = await member(t, org.orgId);
      const bob = await member(t, org.orgId);
      const admin = await member(t, org.orgId, 'admin');
      await setAvatar(t, alice.caller, userTarget(alice.userId));
      const denied = await readError(
        await uploadUrl(t, alice.caller, {
          filename: 'b.png',
          mime_type: 'image/png',
          size_bytes: 10,
          ...userTarget(bob.userId),
        }),
        403,
      );
      expect(denied).toMatchObject({ code: 'forbidden', required_permission: 'users.edit' });
      const { out } = await setAvatar(t, admin.caller, userTarget(bob.userId));
      expect(out.user?._id).toBe(bob.userId);
      expect(out.user?.avatar_url).toEqual(expect.any(String));
    },
  );

  avatarTest('a viewer sets their own avatar', async ({ t, org }) => {
    const viewer = await member(t, org.orgId, 'viewer');
    const { out } = await setAvatar(t, viewer.caller, userTarget(viewer.userId));
    expect(out.user?.avatar_url).toEqual(expect.any(String));
  });

  avatarTest(
    "a member cannot confirm another user's avatar an admin uploaded, for that user or for themselves",
    async ({ t, org }) => {
      const alice = await member(t, org.orgId);
      const bob = await member(t, org.orgId);
      const admin = await member(t, org.orgId, 'admin');
      const link = await linkFor(
        t,
        admin.caller,
        userTarget(bob.userId),
        'image/png',
        IMAGES['image/png'].length,
      );
      expect((await put(t, link, IMAGES['image/png'])).status).toBe(200);
      // Bob's key for Alice's own avatar: issued for another target, so not hers to use.
      const own = await readError(await confirm(t, alice.caller, link.key, userTarget(alice.userId)), 400);
      expect(detailFields(own)).toEqual(['key']);
      expect(own.details?.[0]?.message).toContain('another user');
      const theirs = await readError(await confirm(t, alice.caller, link.key, userTarget(bob.userId)), 403);
      expect(theirs.code).toBe('forbidden');
    },
  );

  avatarTest("only the owner sets the organization's logo: an admin is 403", async ({ t, org }) => {
    const admin = await member(t, org.orgId, 'admin');
    const target: Target = { target_type: 'organization', target_id: org.orgId };
    const denied = await readError(
      await uploadUrl(t, admin.caller, {
        filename: 'logo.png',
        mime_type: 'image/png',
        size_bytes: 10,
        ...target,
      }),
      403,
    );
    expect(denied.code).toBe('forbidden');
    await setAvatar(t, org, target);
  });

  avatarTest('a personal access token needs write:users', async ({ t, org }) => {
    const body = { filename: 'me.png', mime_type: 'image/png', size_bytes: 10, ...userTarget(org.ownerId) };
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:users']);
    expect((await uploadUrl(t, { token: reader.token }, body)).status).toBe(403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['write:users']);
    expect((await uploadUrl(t, { token: writer.token }, body)).status).toBe(200);
  });
});

describe('tenancy', () => {
  avatarTest("another organization's user or organization is a 404", async ({ t, org, other }) => {
    const base = { filename: 'x.png', mime_type: 'image/png', size_bytes: 10 };
    const user = await readError(await uploadUrl(t, org, { ...base, ...userTarget(other.ownerId) }), 404);
    expect(user.code).toBe('not_found');
    const organization = await readError(
      await uploadUrl(t, org, { ...base, target_type: 'organization', target_id: other.orgId }),
      404,
    );
    expect(organization.code).toBe('not_found');
  });

  avatarTest(
    "another organization's key is a 400 naming key, and leaves their upload alone",
    async ({ t, org, other }) => {
      const link = await linkFor(
        t,
        other,
        userTarget(other.ownerId),
        'image/png',
        IMAGES['image/png'].length,
      );
      expect((await put(t, link, IMAGES['image/png'])).status).toBe(200);
      const refused = await readError(await confirm(t, org, link.key, userTarget(org.ownerId)), 400);
      expect(detailFields(refused)).toEqual(['key']);
      expect(await t.services.files.head(link.key)).not.toBeNull();
      const theirs = await readOutput(
        await confirm(t, other, link.key, userTarget(other.ownerId)),
        TOOL.confirm_avatar_upload,
      );
      expect(theirs.user?.avatar_url).toEqual(expect.any(String));
    },
  );

  avatarTest('an unknown or malformed avatar id is a 404', async ({ t }) => {
    expect((await t.app.request(`/avatars/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await t.app.request('/avatars/not-an-id')).status).toBe(404);
  });
});

describe('bounds', () => {
  const valid = { filename: 'me.png', mime_type: 'image/png', size_bytes: 10 };
  avatarTest.for([
    ['size_bytes', { size_bytes: 0 }],
    ['size_bytes', { size_bytes: MAX + 1 }],
    ['size_bytes', { size_bytes: 1.5 }],
    ['mime_type', { mime_type: 'image/gif' }],
    ['mime_type', { mime_type: 'image/svg+xml' }],
    ['target_type', { target_type: 'lead' }],
    ['target_id', { target_id: 'nope' }],
    ['filename', { filename: '' }],
    ['filename', { filename: 'two\nlines.png' }],
  ] as const)('refuses %s in %j with a 400 naming it', async ([field, change], { t, org }) => {
    const res = await uploadUrl(t, org, { ...valid, ...userTarget(org.ownerId), ...change });
    expect(detailFields(await readError(res, 400))).toEqual([field]);
  });

  avatarTest('takes the largest size, 5 MiB', async ({ t, org }) => {
    const res = await uploadUrl(t, org, { ...valid, size_bytes: MAX, ...userTarget(org.ownerId) });
    expect(res.status).toBe(200);
  });

  avatarTest(
    'refuses a confirmation without key or with a bad target_type, naming the field',
    async ({ t, org }) => {
      const missing = await t.request('POST', '/api/v1/files/avatar/confirm', {
        token: org.token,
        body: userTarget(org.ownerId),
      });
      expect(detailFields(await readError(missing, 400))).toEqual(['key']);
      const badType = await confirm(t, org, 'org/x/avatars/a.png', {
        target_type: 'lead' as 'user',
        target_id: org.ownerId,
      });
      expect(detailFields(await readError(badType, 400))).toEqual(['target_type']);
    },
  );
});

describe('removing an avatar', () => {
  avatarTest(
    'clears avatar_url, deletes the object, 404s the URL, and changes nothing when repeated',
    async ({ t }) => {
      const org = await t.createOrg();
      const target = userTarget(org.ownerId);
      const { out } = await setAvatar(t, org, target);
      const url = out.user?.avatar_url ?? '';
      expect(await avatarObjects(t, org.orgId)).toEqual([await storedKeyOf(t, url)]);
      const remove = () => t.request('DELETE', '/api/v1/files/avatar', { token: org.token, body: target });
      const removed = await readOutput(await remove(), TOOL.remove_avatar);
      expect(removed.user?.avatar_url).toBeNull();
      expect(await avatarObjects(t, org.orgId)).toEqual([]);
      expect((await t.app.request(url)).status).toBe(404);
      const again = await readOutput(await remove(), TOOL.remove_avatar);
      expect(again.user?.avatar_url).toBeNull();
    },
  );

  avatarTest("follows the same rules: a member may not remove another user's avatar", async ({ t, org }) => {
    const alice = await member(t, org.orgId);
    const bob = await member(t, org.orgId);
    await setAvatar(t, bob.caller, userTarget(bob.userId));
    const res = await t.request('DELETE', '/api/v1/files/avatar', {
      token: alice.caller.token,
      body: userTarget(bob.userId),
    });
    expect((await readError(res, 403)).code).toBe('forbidden');
    const kept = await readOutput(
      await t.request('GET', `/api/v1/users/${bob.userId}`, { token: org.token }),
      TOOL.get_user,
    );
    expect(kept.user.avatar_url).toEqual(expect.any(String));
  });
});

describe('the leading bytes', () => {
  avatarTest('refuses a RIFF file that is no WEBP (a WAVE sound) declared image/webp', async ({ t }) => {
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const wave = new Uint8Array(Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt data', 'latin1'));
    const link = await linkFor(t, org, target, 'image/webp', wave.length);
    expect((await put(t, link, wave)).status).toBe(200);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(detailFields(refused)).toEqual(['key']);
    expect(refused.details?.[0]?.message).toContain('not a PNG, JPEG or WEBP image');
    expect(await avatarObjects(t, org.orgId)).toEqual([]);
  });

  avatarTest('refuses a JPEG declared as image/png', async ({ t }) => {
    const org = await t.createOrg();
    const target = userTarget(org.ownerId);
    const jpeg = IMAGES['image/jpeg'];
    const link = await linkFor(t, org, target, 'image/png', jpeg.length);
    expect((await put(t, link, jpeg)).status).toBe(200);
    const refused = await readError(await confirm(t, org, link.key, target), 400);
    expect(refused.details?.[0]?.message).toContain('is image/jpeg by its first bytes');
  });
});

describe('the daily cleanup', () => {
  avatarTest(
    'removes uploads never confirmed a day after their link, and objects written after a confirmation, never an avatar',
    async ({ t }) => {
      const org = await t.createOrg();
      const png = IMAGES['image/png'];
      const pending = await linkFor(t, org, userTarget(org.ownerId), 'image/png', png.length);
      expect((await put(t, pending, png)).status).toBe(200);
      const admin = await member(t, org.orgId, 'admin');
      const { link, out } = await setAvatar(t, admin.caller, userTarget(admin.userId));
      const url = out.user?.avatar_url ?? '';
      const served = await storedKeyOf(t, url);
      // Written again through the confirmed upload's link: never served, left for the cleanup.
      expect((await put(t, link, png)).status).toBe(200);
      expect((await avatarObjects(t, org.orgId)).sort()).toEqual([pending.key, link.key, served].sort());

      expect(await cleanupAvatarUploads(t.services)).toBe(0);
      expect(await avatarObjects(t, org.orgId)).toHaveLength(3);

      const tomorrow = new Date(Date.now() + 25 * 60 * 60 * 1000);
      expect(await cleanupAvatarUploads(t.services, tomorrow)).toBeGreaterThanOrEqual(1);
      expect(await avatarObjects(t, org.orgId)).toEqual([served]);
      const late = await readError(await confirm(t, org, pending.key, userTarget(org.ownerId)), 400);
      expect(detailFields(late)).toEqual(['key']);
      expect(Array.from((await fetchAvatar(t, url)).bytes)).toEqual(Array.from(png));
    },
  );
});
