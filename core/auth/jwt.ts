// Session JWTs: HS256, 15 minutes, `sub` = user id, `org` = organization id (docs/contracts.md "Session JWTs").
import { errors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../errors.ts';

export const SESSION_TTL_SECONDS = 15 * 60;
/** How far a token's `iat` may lie ahead of this server's clock (clocks of several nodes drift). */
const CLOCK_SKEW_SECONDS = 30;

export interface SessionClaims {
  sub: string;
  org: string;
}

export async function signSession(key: Uint8Array, claims: SessionClaims, now = new Date()): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ org: claims.org })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + SESSION_TTL_SECONDS)
    .sign(key);
}

/**
 * Verifies a session JWT; an expired one is `token_expired`, anything else wrong is `invalid_jwt`.
 * Only tokens shaped like ours are accepted: `exp` and `iat` present, a lifetime no longer than
 * ours, and not issued in the future. A token signed with a leaked or shared key but minted to live
 * for years (or without `exp`) is therefore refused, not honoured for as long as it says.
 */
export async function verifySession(
  key: Uint8Array,
  token: string,
  now = new Date(),
): Promise<SessionClaims> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      requiredClaims: ['exp', 'iat', 'sub'],
      currentDate: now,
    });
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const { exp, iat } = payload;
    if (
      typeof payload.sub !== 'string' ||
      typeof payload.org !== 'string' ||
      exp === undefined ||
      iat === undefined ||
      exp - iat > SESSION_TTL_SECONDS ||
      iat > nowSeconds + CLOCK_SKEW_SECONDS
    ) {
      throw new AppError('invalid_jwt');
    }
    return { sub: payload.sub, org: payload.org };
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof errors.JWTExpired) throw new AppError('token_expired');
    throw new AppError('invalid_jwt');
  }
}
