// Locks in the storage port: one contract (put/head/get/readStart/copy/delete, signed upload and download links, upload confirmation, key rules) met alike by the disk store served by the app and by S3 on a real s3rver, plus the disk links' signature, expiry, size and type checks.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { AppError } from '../../core/errors.ts';
import {
  confirmUpload,
  DiskFileStore,
  deriveFileSigningKey,
  type FileStore,
  type SignedUpload,
} from '../../core/storage.ts';
import { S3FileStore } from '../../providers/s3-storage.ts';
import { createTestContext, type TestContext } from '../helpers.ts';
import { type S3Peer, startS3Peer } from '../support/s3-peer.ts';

let seq = 0;
const uniqueKey = (name: string) => `tests/${Date.now().toString(36)}-${seq++}/${name}`;
const bytesOf = (text: string) => new TextEncoder().encode(text);

async function textOf(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

/** How a client reaches an adapter's links: the disk store's through the app, S3's over the network. */
interface Harness {
  store: () => FileStore;
  send: (url: string, init?: RequestInit) => Response | Promise<Response>;
}

const uploadTo = (
  h: Harness,
  link: SignedUpload,
  body: string | Uint8Array<ArrayBuffer>,
  contentType?: string,
) =>
  h.send(link.url, {
    method: link.method,
    headers: { 'content-type': contentType ?? link.headers['content-type'] },
    body,
  });

let disk: TestContext;
let dataDir: string;
let s3: TestContext;
let peer: S3Peer;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-files-'));
  peer = await startS3Peer();
  [disk, s3] = await Promise.all([
    createTestContext({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://crm.example.test' }),
    createTestContext(peer.env),
  ]);
});

afterAll(async () => {
  await Promise.all([disk?.close(), s3?.close()]);
  await peer?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const harnesses: [string, Harness][] = [
  [
    'disk store (served by the app)',
    { store: () => disk.services.files, send: (u, i) => disk.app.request(u, i) },
  ],
  ['S3 store (s3rver)', { store: () => s3.services.files, send: (u, i) => fetch(u, i) }],
];

describe.each(harnesses)('the storage contract on the %s', (_name, h) => {
  it('stores, describes, reads, replaces and deletes a file', async () => {
    const store = h.store();
    const key = uniqueKey('note.txt');
    expect(await store.head(key)).toBeNull();
    expect(await store.get(key)).toBeNull();

    await store.put(key, 'first version', { contentType: 'text/plain' });
    expect(await store.head(key)).toEqual({ size: 13, contentType: 'text/plain' });
    const first = await store.get(key);
    expect(first && (await textOf(first.body))).toBe('first version');

    await store.put(key, bytesOf('%PDF-1.7 second'), { contentType: 'application/pdf' });
    const second = await store.get(key);
    expect(second && { size: second.size, contentType: second.contentType }).toEqual({
      size: 15,
      contentType: 'application/pdf',
    });
    expect(second && (await textOf(second.body))).toBe('%PDF-1.7 second');

    await store.delete(key);
    expect(await store.head(key)).toBeNull();
    await expect(store.delete(key)).resolves.toBeUndefined();
  });

  it('reads the first bytes of a file, all of a shorter one, and null for a missing one', async () => {
    const store = h.store();
    const key = uniqueKey('logo.png');
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]);
    await store.put(key, png, { contentType: 'image/png' });
    expect(Array.from((await store.readStart(key, 8)) ?? [])).toEqual(Array.from(png.subarray(0, 8)));
    expect(Array.from((await store.readStart(key, 100)) ?? [])).toEqual(Array.from(png));
    expect(await store.readStart(uniqueKey('none.png'), 8)).toBeNull();
    await expect(store.readStart(key, 0)).rejects.toMatchObject({
      code: 'validation_failed',
      body: { details: [{ field: 'bytes' }] },
    });
  });

  it('copies a file inside the store: the copy stays as it was when the source changes; a missing source is false', async () => {
    const store = h.store();
    const from = uniqueKey('upload.png');
    const to = uniqueKey('final.png');
    await store.put(from, 'first bytes', { contentType: 'image/png' });
    expect(await store.copy(from, to)).toBe(true);
    await store.put(from, 'replaced later', { contentType: 'text/plain' });
    expect(await store.head(to)).toEqual({ size: 11, contentType: 'image/png' });
    const copied = await store.get(to);
    expect(copied && (await textOf(copied.body))).toBe('first bytes');
    expect(await store.copy(uniqueKey('none.png'), uniqueKey('never.png'))).toBe(false);
  });

  it('keeps a file and the folder of a longer key apart', async () => {
    const store = h.store();
    const key = uniqueKey('a');
    await store.put(key, 'parent', { contentType: 'text/plain' });
    await store.put(`${key}/child`, 'child', { contentType: 'text/plain' });
    expect((await store.head(key))?.size).toBe(6);
    expect((await store.head(`${key}/child`))?.size).toBe(5);
  });

  it('takes an upload through its signed link and gives it back through a signed download link', async () => {
    const store = h.store();
    const key = uniqueKey('invoice.pdf');
    const link = await store.signedUploadUrl(key, {
      contentType: 'application/pdf',
      maxBytes: 1000,
      expiresIn: 300,
    });
    expect(link.method).toBe('PUT');
    expect(link.expiresAt.getTime()).toBeGreaterThan(Date.now() + 290_000);
    const put = await uploadTo(h, link, '%PDF-1.7 uploaded');
    expect(put.status).toBe(200);

    expect(await confirmUpload(store, key, { contentType: 'application/pdf', maxBytes: 1000 })).toEqual({
      size: 17,
      contentType: 'application/pdf',
    });

    const url = await store.signedDownloadUrl(key, { expiresIn: 60, filename: 'Facture n°1.pdf' });
    expect(url).toMatch(/^https?:\/\//);
    const got = await h.send(url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="Facture n_1.pdf"; filename*=UTF-8''Facture%20n%C2%B01.pdf`,
    );
    expect(await got.text()).toBe('%PDF-1.7 uploaded');
  });

  it('never confirms an upload sent with another content type than its link names', async () => {
    const store = h.store();
    const key = uniqueKey('photo.png');
    const link = await store.signedUploadUrl(key, {
      contentType: 'image/png',
      maxBytes: 1000,
      expiresIn: 300,
    });
    const put = await uploadTo(h, link, '<script>alert(1)</script>', 'text/html');
    // The disk store refuses it at once; S3 refuses it by its signature (s3rver does not check
    // signatures, so there it lands, and confirmation must catch and delete it).
    if (put.ok) {
      const confirmation = confirmUpload(store, key, { contentType: 'image/png', maxBytes: 1000 });
      await expect(confirmation).rejects.toMatchObject({ code: 'unsupported_media_type' });
    } else {
      expect(put.status).toBe(415);
    }
    expect(await store.head(key)).toBeNull();
  });

  it('confirms an upload only within its size and type, deleting one that is not', async () => {
    const store = h.store();
    const big = uniqueKey('big.pdf');
    await store.put(big, 'x'.repeat(101), { contentType: 'application/pdf' });
    const tooBig = confirmUpload(store, big, { contentType: 'application/pdf', maxBytes: 100 });
    await expect(tooBig).rejects.toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(await store.head(big)).toBeNull();

    const wrong = uniqueKey('wrong.pdf');
    await store.put(wrong, 'hello', { contentType: 'text/html' });
    const wrongType = confirmUpload(store, wrong, { contentType: 'application/pdf', maxBytes: 100 });
    await expect(wrongType).rejects.toMatchObject({ code: 'unsupported_media_type' });
    expect(await store.head(wrong)).toBeNull();

    const missing = confirmUpload(store, uniqueKey('none.pdf'), {
      contentType: 'application/pdf',
      maxBytes: 1,
    });
    await expect(missing).rejects.toMatchObject({ code: 'not_found' });
  });

  it.each([
    '../escape',
    'a/../../etc/passwd',
    '/absolute',
    'a//b',
    '.hidden',
    'a/./b',
    'trailing/',
    'space here',
    'tilde~',
    'x'.repeat(513),
    '',
  ])('refuses the key %j before touching anything', async (key) => {
    const store = h.store();
    const refusals = [
      store.put(key, 'x', { contentType: 'text/plain' }),
      store.head(key),
      store.get(key),
      store.delete(key),
      store.readStart(key, 8),
      store.copy(key, 'tests/valid-target'),
      store.copy('tests/valid-source', key),
      store.signedUploadUrl(key, { contentType: 'text/plain', maxBytes: 10, expiresIn: 60 }),
      store.signedDownloadUrl(key, { expiresIn: 60 }),
    ];
    for (const refusal of refusals) {
      const err = await refusal.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'validation_failed', body: { details: [{ field: 'key' }] } });
    }
  });

  it('refuses link lifetimes beyond seven days, sizes and content types it cannot honour', async () => {
    const store = h.store();
    const key = uniqueKey('f.bin');
    await expect(store.signedDownloadUrl(key, { expiresIn: 7 * 24 * 3600 + 1 })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    await expect(
      store.signedUploadUrl(key, { contentType: 'text/plain', maxBytes: 0, expiresIn: 60 }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      store.signedUploadUrl(key, { contentType: 'text/plain\r\nX-Evil: 1', maxBytes: 10, expiresIn: 60 }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });
});

describe('the storage configuration', () => {
  it('links to http://localhost:PORT unless PUBLIC_BASE_URL says otherwise, without a trailing slash', () => {
    expect(loadConfig({ PORT: '4100' }).publicBaseUrl).toBe('http://localhost:4100');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://crm.example.com/app/' }).publicBaseUrl).toBe(
      'https://crm.example.com/app',
    );
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://crm.example.com' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('uses S3 only with S3_BUCKET, and refuses one S3 key without the other', () => {
    expect(loadConfig({}).s3).toBeUndefined();
    expect(loadConfig({ S3_BUCKET: 'b' }).s3).toEqual({
      bucket: 'b',
      endpoint: undefined,
      region: 'us-east-1',
      credentials: undefined,
      forcePathStyle: false,
    });
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' })).toThrow(
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/,
    );
  });
});

describe('the adapter each configuration selects', () => {
  it('is the disk store without S3_BUCKET and S3 with it', () => {
    expect(disk.services.files).toBeInstanceOf(DiskFileStore);
    expect(s3.services.files).toBeInstanceOf(S3FileStore);
  });

  it('signs the content type into S3 upload links, so S3 refuses a PUT of another type', async () => {
    const link = await s3.services.files.signedUploadUrl(uniqueKey('a.png'), {
      contentType: 'image/png',
      maxBytes: 10,
      expiresIn: 60,
    });
    const url = new URL(link.url);
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-type');
    expect(url.searchParams.has('x-amz-checksum-crc32')).toBe(false);
    expect(url.origin).toBe(peer.env.S3_ENDPOINT);
    expect(url.pathname.startsWith('/crm-test/tests/')).toBe(true);
  });

  it('serves no /files route when files live on S3', async () => {
    const res = await s3.app.request('/files/tests/x?expires=1&signature=x');
    expect(res.status).toBe(404);
  });
});

describe('the disk store links the server answers', () => {
  const store = () => disk.services.files;

  async function storedFile(content = 'secret bytes'): Promise<string> {
    const key = uniqueKey('doc.txt');
    await store().put(key, content, { contentType: 'text/plain' });
    return key;
  }

  it('are absolute URLs under PUBLIC_BASE_URL, and the files lie under DATA_DIR/files', async () => {
    const key = await storedFile();
    const url = await store().signedDownloadUrl(key, { expiresIn: 60 });
    expect(url.startsWith(`https://crm.example.test/files/${key}?`)).toBe(true);
    expect(readdirSync(join(dataDir, 'files', key, '..'))).toEqual(['doc.txt~']);
  });

  it('answer 403 to a tampered signature, another key, a longer expiry or a dropped filename', async () => {
    const key = await storedFile();
    const other = await storedFile('other secret');
    const url = new URL(await store().signedDownloadUrl(key, { expiresIn: 60, filename: 'a.txt' }));
    const signature = url.searchParams.get('signature') ?? '';
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;

    const variants: URL[] = [];
    const tampered = new URL(url);
    tampered.searchParams.set('signature', flipped);
    variants.push(tampered);
    variants.push(new URL(url.href.replace(key, other)));
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    variants.push(longer);
    const renamed = new URL(url);
    renamed.searchParams.delete('filename');
    variants.push(renamed);
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    variants.push(unsigned);

    for (const variant of variants) {
      const res = await disk.app.request(variant.href);
      expect(res.status, variant.href).toBe(403);
      expect(await res.json()).toMatchObject({
        code: 'forbidden',
        message: 'The link signature is not valid',
      });
    }
    expect((await disk.app.request(url.href)).status).toBe(200);
  });

  it('answer 403 once expired, and a download link does not upload', async () => {
    const key = await storedFile();
    // The same signing key with a clock an hour behind mints links that have already expired.
    const past = new DiskFileStore({
      root: join(dataDir, 'files'),
      signingKey: deriveFileSigningKey(disk.services.jwtKey),
      publicBaseUrl: disk.config.publicBaseUrl,
      now: () => Date.now() - 3600_000,
    });
    const expired = await disk.app.request(await past.signedDownloadUrl(key, { expiresIn: 60 }));
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ message: 'The link has expired' });
    const stale = await past.signedUploadUrl(key, {
      contentType: 'text/plain',
      maxBytes: 100,
      expiresIn: 60,
    });
    expect((await uploadTo({ store, send: (u, i) => disk.app.request(u, i) }, stale, 'new')).status).toBe(
      403,
    );

    const download = await store().signedDownloadUrl(key, { expiresIn: 60 });
    const put = await disk.app.request(download, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'overwritten',
    });
    expect(put.status).toBe(403);
    const kept = await store().get(key);
    expect(kept && (await textOf(kept.body))).toBe('secret bytes');
  });

  it('serve stored bytes so a browser cannot run them as a page of this origin', async () => {
    const key = uniqueKey('page.html');
    await store().put(key, '<script>alert(1)</script>', { contentType: 'text/html' });
    const res = await disk.app.request(await store().signedDownloadUrl(key, { expiresIn: 60 }));
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });

  it('answer 404 for a signed link whose file is gone, and for a key that could never exist', async () => {
    const key = await storedFile();
    const url = await store().signedDownloadUrl(key, { expiresIn: 60 });
    await store().delete(key);
    expect((await disk.app.request(url)).status).toBe(404);
    expect(
      (await disk.app.request('/files/..%2F..%2Fetc%2Fpasswd?expires=9999999999&signature=x')).status,
    ).toBe(404);
  });

  it('take uploads above the 1 MiB JSON limit, and refuse one above its own limit, leaving no temp file', async () => {
    const send = (u: string, i?: RequestInit) => disk.app.request(u, i);
    const key = uniqueKey('scan.bin');
    const link = await store().signedUploadUrl(key, {
      contentType: 'application/octet-stream',
      maxBytes: 2 * 1024 * 1024,
      expiresIn: 60,
    });
    const large = new Uint8Array(1536 * 1024).fill(7);
    const ok = await uploadTo({ store, send }, link, large);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ key, size: large.length, content_type: 'application/octet-stream' });

    const small = uniqueKey('small.bin');
    const limited = await store().signedUploadUrl(small, {
      contentType: 'application/octet-stream',
      maxBytes: 1000,
      expiresIn: 60,
    });
    const refused = await uploadTo({ store, send }, limited, new Uint8Array(1001));
    expect(refused.status).toBe(413);
    expect(await store().head(small)).toBeNull();
    expect(readdirSync(join(dataDir, 'files', small, '..'))).toEqual([]);

    const declared = await disk.app.request(limited.url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': '5000' },
      body: new Uint8Array(10),
    });
    expect(declared.status).toBe(413);
  });

  it('answer 415 to an upload whose content type differs from its link', async () => {
    const key = uniqueKey('a.png');
    const link = await store().signedUploadUrl(key, {
      contentType: 'image/png',
      maxBytes: 100,
      expiresIn: 60,
    });
    const res = await disk.app.request(link.url, {
      method: 'PUT',
      headers: { 'content-type': 'text/html' },
      body: 'x',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      code: 'unsupported_media_type',
      message: 'This link accepts image/png only',
    });
  });
});

describe('the disk store links under the public limit', () => {
  // Last in the file: the earlier link tests spent part of this address's minute already.
  it('answer 429 once an address has spent its 60 requests a minute', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 61 && last?.status !== 429; i++) {
      last = await disk.app.request('/files/tests/none?expires=1');
      statuses.push(last.status);
    }
    expect(statuses.slice(0, -1).every((s) => s === 403)).toBe(true);
    expect(last?.status).toBe(429);
    expect(last?.headers.get('ratelimit-limit')).toBe('60');
    expect(last?.headers.get('ratelimit-remaining')).toBe('0');
  });
});
