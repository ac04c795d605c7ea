// The storage port: files (invoice PDFs, proposal attachments, uploads) kept by key, with links a
// browser can upload to or download from directly, so file bytes never pass through a tool call.
// Two adapters: the disk store below (the embedded default, under DATA_DIR/files, whose signed links
// the server itself answers at /files/{key}: rest/file-routes.ts) and S3 (providers/s3-storage.ts).
//
// Keys are chosen by the code, never by a caller: `<area>/<org id>/<id>.<ext>` is the convention.
// A presigned S3 PUT cannot limit the size of what is sent, so after a browser upload the code that
// receives "uploaded" calls confirmUpload(), which checks size and type on every adapter alike.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { copyFile, type FileHandle, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AppError } from './errors.ts';

export interface StoredFileInfo {
  /** Bytes. */
  size: number;
  contentType: string;
}

export interface StoredFile extends StoredFileInfo {
  /** The bytes, read on demand; `new Response(body).arrayBuffer()` buffers them. */
  body: ReadableStream<Uint8Array>;
}

/** What a client needs to upload: PUT the bytes to `url` with exactly these headers before `expiresAt`. */
export interface SignedUpload {
  url: string;
  method: 'PUT';
  headers: { 'content-type': string };
  expiresAt: Date;
}

export interface SignedUploadOptions {
  contentType: string;
  /** The disk store refuses larger uploads; on S3 confirmUpload() enforces it afterwards. */
  maxBytes: number;
  /** Seconds the link stays valid (at most MAX_LINK_SECONDS). */
  expiresIn: number;
}

/** A signed upload link as the API answers it (the attachment and avatar upload routes). */
export interface UploadLinkAnswer {
  upload_url: string;
  method: 'PUT';
  headers: { 'content-type': string };
  key: string;
  expires_at: string;
}

/** Signs an upload link for `key` and answers it in the API's shape. */
export async function issueUploadLink(
  files: FileStore,
  key: string,
  options: SignedUploadOptions,
): Promise<UploadLinkAnswer> {
  const link = await files.signedUploadUrl(key, options);
  return {
    upload_url: link.url,
    method: link.method,
    headers: link.headers,
    key,
    expires_at: link.expiresAt.toISOString(),
  };
}

export interface SignedDownloadOptions {
  /** Seconds the link stays valid (at most MAX_LINK_SECONDS). */
  expiresIn: number;
  /** Sent as `Content-Disposition: attachment` so the browser saves the file under this name. */
  filename?: string;
}

export interface FileStore {
  readonly kind: 'disk' | 's3';
  /** Writes (or replaces) the file at `key` in one step: readers see the old or the new file, never a mix. */
  put(key: string, body: Uint8Array | string, options: { contentType: string }): Promise<void>;
  /** Size and type, or null when there is no such file. */
  head(key: string): Promise<StoredFileInfo | null>;
  get(key: string): Promise<StoredFile | null>;
  /**
   * The first `bytes` bytes of the file (fewer when it is shorter), or null when there is no such
   * file: enough to check what a file is by its leading bytes without reading all of it.
   */
  readStart(key: string, bytes: number): Promise<Uint8Array | null>;
  /**
   * Copies the file at `from` to `to` (replacing what is there) in one step, inside the store;
   * false when there is no file at `from`. The copy is a file of its own: a later upload to `from`
   * (through a link still valid) leaves it as it was.
   */
  copy(from: string, to: string): Promise<boolean>;
  /** Deleting a missing file is not an error. */
  delete(key: string): Promise<void>;
  signedUploadUrl(key: string, options: SignedUploadOptions): Promise<SignedUpload>;
  /** An absolute URL anyone holding it may GET until it expires. */
  signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string>;
  close(): Promise<void>;
}

/** SigV4 presigned URLs live at most 7 days; the disk store keeps the same bound so callers can't rely on more. */
const MAX_LINK_SECONDS = 7 * 24 * 3600;
/** One S3 PUT takes at most 5 GiB. */
const MAX_UPLOAD_BYTES = 5 * 1024 ** 3;
const MAX_KEY_LENGTH = 512;
/** A segment starts with a letter, digit or underscore, so `.`, `..` and hidden temp files are impossible. */
const KEY_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;
/** A media type with optional parameters, printable ASCII on one line (exported for input schemas). */
export const CONTENT_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\x20-\x7e]*)?$/;

export function isValidFileKey(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && key.split('/').every((segment) => KEY_SEGMENT.test(segment));
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', { details: [{ field, message, code: 'invalid' }] });
}

/** Throws a 400 naming the problem; both adapters check every key and option the same way. */
export function assertFileKey(key: string): void {
  if (!isValidFileKey(key))
    throw invalid(
      'key',
      `must be 1-${MAX_KEY_LENGTH} characters of /-separated segments of letters, digits, ".", "_" and "-", each starting with a letter, digit or "_"`,
    );
}

/** A media type with optional parameters (`text/html; charset=utf-8`), printable ASCII on one line. */
function isContentType(contentType: string): boolean {
  return contentType.length <= 255 && CONTENT_TYPE.test(contentType);
}

export function assertContentType(contentType: string): void {
  if (!isContentType(contentType))
    throw invalid('content_type', 'must be a media type such as application/pdf');
}

export function assertLinkSeconds(expiresIn: number): void {
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_LINK_SECONDS)
    throw invalid('expires_in', `must be a whole number of seconds from 1 to ${MAX_LINK_SECONDS}`);
}

/** How many leading bytes readStart may ask for: a check of a file's kind, not a download. */
const MAX_START_BYTES = 64 * 1024;

export function assertStartBytes(bytes: number): void {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_START_BYTES)
    throw invalid('bytes', `must be a whole number of bytes from 1 to ${MAX_START_BYTES}`);
}

export function assertMaxBytes(maxBytes: number): void {
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_UPLOAD_BYTES)
    throw invalid('max_bytes', `must be a whole number of bytes from 1 to ${MAX_UPLOAD_BYTES}`);
}

/** `attachment` with an ASCII fallback name and the exact UTF-8 name (RFC 6266), safe in a header. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16)}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Checks a file a client says it uploaded against what its link allowed. A file too large or of
 * another type is deleted and refused (413 / 415), so it can never be attached; missing is a 404.
 */
export async function confirmUpload(
  store: FileStore,
  key: string,
  expected: { contentType: string; maxBytes: number },
): Promise<StoredFileInfo> {
  const info = await store.head(key);
  if (!info) throw new AppError('not_found', { message: 'No file was uploaded under this key' });
  if (info.size > expected.maxBytes) {
    await store.delete(key);
    throw new AppError('payload_too_large', {
      error: 'File too large',
      message: `The file has ${info.size} bytes; at most ${expected.maxBytes} are allowed`,
    });
  }
  if (info.contentType !== expected.contentType) {
    await store.delete(key);
    throw new AppError('unsupported_media_type', {
      error: 'Unexpected file type',
      message: `The file is ${info.contentType}; ${expected.contentType} was expected`,
    });
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// The disk store

/** The signing key of file links, derived from the session key so no second secret must be kept. */
export function deriveFileSigningKey(jwtKey: Uint8Array): Buffer {
  return createHmac('sha256', jwtKey).update('crm file links v1').digest();
}

/** What a disk link allows, as read back from its query string once its signature holds. */
export interface DownloadGrant {
  key: string;
  filename: string | undefined;
}

export interface UploadGrant {
  key: string;
  contentType: string;
  maxBytes: number;
}

export type GrantRefusal = 'invalid_signature' | 'expired';

/** The chunks of a web stream (a request body); leaving the loop early cancels the rest. */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel();
    reader.releaseLock();
  }
}

/** Reads from `start` to the end in 64 KiB chunks, closing the handle when done, failed or cancelled. */
function streamFrom(handle: FileHandle, start: number): ReadableStream<Uint8Array> {
  let position = start;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = Buffer.alloc(64 * 1024);
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
        if (bytesRead === 0) {
          controller.close();
          await handle.close();
          return;
        }
        position += bytesRead;
        controller.enqueue(chunk.subarray(0, bytesRead));
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
    cancel: () => handle.close(),
  });
}

/** The file's header line (`{"contentType":...}\n`) is at most this long; a content type is at most 255 characters. */
const HEADER_MAX = 512;

export interface DiskFileStoreOptions {
  /** DATA_DIR/files. */
  root: string;
  signingKey: Uint8Array;
  /** PUBLIC_BASE_URL, without a trailing slash. */
  publicBaseUrl: string;
  /** Clock in milliseconds (tests move it to check expiry). */
  now?: () => number;
}

/**
 * Files on local disk. Each key `a/b.pdf` is one file `root/a/b.pdf~` holding a JSON header line
 * with its content type, then the bytes: one file per key means one atomic rename replaces both,
 * and the `~` (never in a key) keeps the file `a~` apart from the folder `a/` of a key `a/b`.
 */
export class DiskFileStore implements FileStore {
  readonly kind = 'disk';
  private readonly root: string;
  private readonly signingKey: Uint8Array;
  private readonly publicBaseUrl: string;
  private readonly now: () => number;

  constructor(options: DiskFileStoreOptions) {
    this.root = options.root;
    this.signingKey = options.signingKey;
    this.publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
    this.now = options.now ?? Date.now;
  }

  private pathOf(key: string): string {
    assertFileKey(key);
    return `${join(this.root, key)}~`;
  }

  async put(key: string, body: Uint8Array | string, options: { contentType: string }): Promise<void> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    await this.write(key, [bytes], { contentType: options.contentType, maxBytes: Infinity });
  }

  /**
   * Streams `body` into a temp file beside the target and renames it into place, counting bytes:
   * past `maxBytes` the temp file is removed and a 413 thrown. Returns the size written.
   */
  async write(
    key: string,
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: { contentType: string; maxBytes: number },
  ): Promise<number> {
    const target = this.pathOf(key);
    assertContentType(options.contentType);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `.tmp-${randomUUID()}`);
    let size = 0;
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.write(`${JSON.stringify({ contentType: options.contentType })}\n`);
        for await (const chunk of body) {
          size += chunk.byteLength;
          if (size > options.maxBytes)
            throw new AppError('payload_too_large', {
              error: 'File too large',
              message: `This upload is limited to ${options.maxBytes} bytes`,
            });
          await handle.write(chunk);
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      return size;
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  /** Opens the file and reads its header; the handle keeps this version readable even if replaced meanwhile. */
  private async openFile(key: string) {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
      throw err;
    }
    try {
      const { size: fileSize } = await handle.stat();
      const head = Buffer.alloc(Math.min(HEADER_MAX, fileSize));
      await handle.read(head, 0, head.length, 0);
      const newline = head.indexOf(10);
      if (newline < 0) throw new Error(`file store: ${key} has no header line`);
      const header: unknown = JSON.parse(head.subarray(0, newline).toString('utf8'));
      if (typeof header !== 'object' || header === null || !('contentType' in header))
        throw new Error(`file store: ${key} has a malformed header`);
      const contentType = String(header.contentType);
      return { handle, start: newline + 1, info: { size: fileSize - newline - 1, contentType } };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async head(key: string): Promise<StoredFileInfo | null> {
    const file = await this.openFile(key);
    if (!file) return null;
    await file.handle.close();
    return file.info;
  }

  async get(key: string): Promise<StoredFile | null> {
    const file = await this.openFile(key);
    if (!file) return null;
    return { ...file.info, body: streamFrom(file.handle, file.start) };
  }

  async readStart(key: string, bytes: number): Promise<Uint8Array | null> {
    assertFileKey(key);
    assertStartBytes(bytes);
    const file = await this.openFile(key);
    if (!file) return null;
    try {
      const start = new Uint8Array(Math.min(bytes, file.info.size));
      const { bytesRead } = await file.handle.read(start, 0, start.length, file.start);
      return start.subarray(0, bytesRead);
    } finally {
      await file.handle.close();
    }
  }

  async copy(from: string, to: string): Promise<boolean> {
    const source = this.pathOf(from);
    const target = this.pathOf(to);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `.tmp-${randomUUID()}`);
    try {
      // A copy beside the target renamed into place, as write() does: readers never see half a file.
      await copyFile(source, temp, fsConstants.COPYFILE_EXCL);
      await rename(temp, target);
      return true;
    } catch (err) {
      await rm(temp, { force: true });
      // The target's folder exists (made above): a missing file is the source.
      if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return false;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async signedUploadUrl(key: string, options: SignedUploadOptions): Promise<SignedUpload> {
    assertFileKey(key);
    assertContentType(options.contentType);
    assertMaxBytes(options.maxBytes);
    assertLinkSeconds(options.expiresIn);
    const expires = Math.floor(this.now() / 1000) + options.expiresIn;
    const params = { content_type: options.contentType, max_bytes: String(options.maxBytes) };
    return {
      url: this.signedUrl('PUT', key, expires, params),
      method: 'PUT',
      headers: { 'content-type': options.contentType },
      expiresAt: new Date(expires * 1000),
    };
  }

  async signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string> {
    assertFileKey(key);
    assertLinkSeconds(options.expiresIn);
    const expires = Math.floor(this.now() / 1000) + options.expiresIn;
    return this.signedUrl('GET', key, expires, options.filename ? { filename: options.filename } : {});
  }

  private signedUrl(method: string, key: string, expires: number, params: Record<string, string>): string {
    const query = new URLSearchParams({ ...params, expires: String(expires) });
    query.set('signature', this.sign(method, key, query));
    return `${this.publicBaseUrl}/files/${key}?${query}`;
  }

  /** HMAC over the method, the key and every parameter but the signature, in one fixed order. */
  private sign(method: string, key: string, query: URLSearchParams): string {
    const fields = ['expires', 'content_type', 'max_bytes', 'filename'].map((name) => query.get(name) ?? '');
    // JSON keeps the fields apart whatever they contain (a file name may hold any character).
    return createHmac('sha256', this.signingKey)
      .update(JSON.stringify([method, key, ...fields]))
      .digest('base64url');
  }

  /** What a GET of /files/{key} with this query may do, or why not (a 403 either way). */
  verifyDownloadLink(key: string, query: URLSearchParams): DownloadGrant | GrantRefusal {
    return this.refusalOf('GET', key, query) ?? { key, filename: query.get('filename') ?? undefined };
  }

  /** What a PUT to /files/{key} with this query may do, or why not (a 403 either way). */
  verifyUploadLink(key: string, query: URLSearchParams): UploadGrant | GrantRefusal {
    return (
      this.refusalOf('PUT', key, query) ?? {
        key,
        contentType: query.get('content_type') ?? '',
        maxBytes: Number(query.get('max_bytes')),
      }
    );
  }

  private refusalOf(method: string, key: string, query: URLSearchParams): GrantRefusal | null {
    const given = Buffer.from(query.get('signature') ?? '');
    const wanted = Buffer.from(this.sign(method, key, query));
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return 'invalid_signature';
    if (!(Number(query.get('expires')) * 1000 > this.now())) return 'expired';
    return null;
  }

  async close(): Promise<void> {}
}
