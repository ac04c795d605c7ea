// Token shapes and secrets, and reading the bearer token from an Authorization header. Only SHA-256
// hashes of tokens are stored; a token is random enough (256 bits) that an unsalted fast hash is the
// right tool, and it allows an indexed lookup.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.ts';

const PAT_PATTERN = /^pat_[0-9a-f]{64}$/;
const OAUTH_PATTERN = /^[0-9a-f]{64}$/;
const JWT_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Extracts the bearer token from an Authorization header; a missing header or another scheme is
 * "Authentication required". Shared by user authentication and the operator's admin token.
 */
export function bearerToken(header: string | undefined | null): string {
  if (!header?.startsWith('Bearer ')) throw new AppError('authentication_required');
  const token = header.slice('Bearer '.length).trim();
  if (!token) throw new AppError('authentication_required');
  return token;
}

export type TokenShape = 'jwt' | 'pat' | 'oauth' | 'unknown';

/** Picks the one validator a token goes to; a JWT-shaped token never falls through to the others. */
export function classifyToken(token: string): TokenShape {
  if (JWT_PATTERN.test(token)) return 'jwt';
  if (PAT_PATTERN.test(token)) return 'pat';
  if (OAUTH_PATTERN.test(token)) return 'oauth';
  return 'unknown';
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function generatePat(): string {
  return `pat_${randomBytes(32).toString('hex')}`;
}

export function generateOauthToken(): string {
  return randomBytes(32).toString('hex');
}

export function generateRefreshToken(): string {
  return `rt_${randomBytes(32).toString('base64url')}`;
}

/** The first 8 characters, shown in listings so a user can tell keys apart: `pat_` + 4 hex. */
export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
