// The test context, kept here for the files that import it from this path: it lives in
// test/fixtures/context.ts, beside the typed builders and readers new tests should use.
export * from './fixtures/context.ts';

/**
 * The body of a response, unchecked: `T` is trusted, not verified. Prefer `readJson(res, schema)`
 * or `readOutput(res, tool)` from test/fixtures/read.ts, which parse the body.
 */
export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
