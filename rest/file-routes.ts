// The links of the disk file store (core/storage.ts), answered by the server itself: GET downloads
// and PUT uploads `/files/{key}?expires=..&signature=..`. Public (the signature is the credential)
// and limited like every public page, 60 requests a minute per IP. With S3 the links point at the
// bucket, so nothing is mounted here.
import type { Context, Hono } from 'hono';
import { AppError } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import {
  chunksOf,
  contentDisposition,
  DiskFileStore,
  type GrantRefusal,
  isValidFileKey,
} from '../core/storage.ts';
import type { AppEnv } from '../http/env.ts';
import { ipRateLimit } from '../http/rate-limit.ts';

/** The path prefix of the links; the HTTP root exempts it from the JSON body cap. */
export const FILES_PATH_PREFIX = '/files/';
const PREFIX = FILES_PATH_PREFIX;

/** The key a link names; a malformed one is a plain 404, as for any unknown path. */
function keyOf(c: Context<AppEnv>): string {
  const key = c.req.path.slice(PREFIX.length);
  if (!isValidFileKey(key)) throw new AppError('not_found');
  return key;
}

function queryOf(c: Context<AppEnv>): URLSearchParams {
  return new URL(c.req.url).searchParams;
}

/** A refused link is a 403 saying why: the signature is the only credential, and it is public knowledge it was wrong. */
function checked<G>(grant: G | GrantRefusal): G {
  if (grant === 'invalid_signature')
    throw new AppError('forbidden', { message: 'The link signature is not valid' });
  if (grant === 'expired') throw new AppError('forbidden', { message: 'The link has expired' });
  return grant;
}

/** Bytes a browser must never run as a page of this origin, whatever their type says. */
const SANDBOX_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; sandbox",
  'X-Content-Type-Options': 'nosniff',
};

async function download(c: Context<AppEnv>, store: DiskFileStore): Promise<Response> {
  const grant = checked(store.verifyDownloadLink(keyOf(c), queryOf(c)));
  const file = await store.get(grant.key);
  if (!file) throw new AppError('not_found', { message: 'File not found' });
  const headers: Record<string, string> = {
    ...SANDBOX_HEADERS,
    'Content-Type': file.contentType,
    'Content-Length': String(file.size),
    'Cache-Control': 'private, no-store',
  };
  if (grant.filename) headers['Content-Disposition'] = contentDisposition(grant.filename);
  return new Response(file.body, { status: 200, headers });
}

async function upload(c: Context<AppEnv>, store: DiskFileStore): Promise<Response> {
  const grant = checked(store.verifyUploadLink(keyOf(c), queryOf(c)));
  const sent = c.req.header('content-type') ?? '';
  if (sent !== grant.contentType)
    throw new AppError('unsupported_media_type', {
      error: 'Content-Type does not match the upload link',
      message: `This link accepts ${grant.contentType} only`,
    });
  const declared = Number(c.req.header('content-length'));
  // A declared length says no before any byte is read; a body without one is counted as it streams.
  if (declared > grant.maxBytes)
    throw new AppError('payload_too_large', {
      error: 'File too large',
      message: `This upload is limited to ${grant.maxBytes} bytes`,
    });
  const body = c.req.raw.body;
  const size = await store.write(grant.key, body ? chunksOf(body) : [], {
    contentType: grant.contentType,
    maxBytes: grant.maxBytes,
  });
  return c.json({ key: grant.key, size, content_type: grant.contentType }, 200);
}

export function mountFileRoutes(app: Hono<AppEnv>, services: Services): void {
  const store = services.files;
  if (!(store instanceof DiskFileStore)) return;
  app.use(`${PREFIX}*`, ipRateLimit(services, ['ingest']));
  app.get(`${PREFIX}*`, (c) => download(c, store));
  app.put(`${PREFIX}*`, (c) => upload(c, store));
}
