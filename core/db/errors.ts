// Recognises PostgreSQL errors through drizzle's wrapper (the driver error is the `cause`).
function pgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (
      typeof e === 'object' &&
      e !== null &&
      'code' in e &&
      typeof e.code === 'string' &&
      /^[0-9A-Z]{5}$/.test(e.code)
    ) {
      return e.code;
    }
    e = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === '23505';
}
