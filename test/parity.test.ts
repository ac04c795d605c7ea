// Locks in REST/MCP parity: for every REST route, the same invalid input fails with the same error
// envelope on both surfaces, because both run the one invoke pipeline.
import {
  Client,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../core/errors.ts';
import type { Route } from '../core/route.ts';
import { ROUTES } from '../tools/index.ts';

import { fileTest } from './fixtures/file-test.ts';

const BAD_ID = 'not-a-hex-id';
const BAD_LIMIT = '1000';
const PATH_PARAM = /:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g;

const envelope = z.looseObject({
  error: z.string(),
  code: z.string(),
  details: z.array(z.object({ field: z.string(), message: z.string(), code: z.string() })).optional(),
});
type Envelope = z.infer<typeof envelope>;
const callResult = z.object({
  isError: z.boolean().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
});
const rpcError = z.object({ code: z.number() });

function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_TABLE, code);
}

interface Probe {
  route: Route;
  /** The request path under /api/v1 with every path parameter set to BAD_ID. */
  url: string;
  /** What the route hands the tool; MCP receives exactly this object. */
  input: Record<string, unknown>;
}

/** An invalid request for the route, or null when the route has no id or limit to get wrong. */
function probeFor(route: Route): Probe | null {
  const names = [...route.path.matchAll(PATH_PARAM)].map((m) => m[1] ?? '');
  const hasLimit = route.method === 'GET' && 'limit' in route.tool.input.shape;
  if (names.length === 0 && !hasLimit) return null;
  const params = Object.fromEntries(names.map((name) => [name, BAD_ID]));
  const query: Record<string, string> = hasLimit ? { limit: BAD_LIMIT } : {};
  const path = route.path.replace(PATH_PARAM, BAD_ID);
  return {
    route,
    url: `/api/v1${path}${hasLimit ? `?limit=${BAD_LIMIT}` : ''}`,
    input: route.input({ params, query, body: {} }),
  };
}

const probes = ROUTES.map(probeFor).filter((p): p is Probe => p !== null);
const expectedCount = ROUTES.filter(
  (r) => r.path.includes('/:') || (r.method === 'GET' && 'limit' in r.tool.input.shape),
).length;

const sortDetails = (body: Envelope) =>
  (body.details ?? [])
    .map((d) => ({ field: d.field, code: d.code }))
    .sort((a, b) => `${a.field}|${a.code}`.localeCompare(`${b.field}|${b.code}`));

// Two probes per route per protocol era outgrow the 120/min MCP budget; the limits have their own tests.
// Enterprise so plan features never stand between a route and its input validation.
const test = fileTest({ options: { withoutRateLimits: true }, plan: 'enterprise' });

const ERAS: { era: string; mode: VersionNegotiationMode }[] = [
  { era: '2025', mode: 'legacy' },
  { era: '2026-07-28', mode: { pin: '2026-07-28' } },
];

describe.each(ERAS)('REST and MCP ($era era) agree on invalid input', ({ mode }) => {
  test('for every route with a path id or a page limit', async ({ t, org }) => {
    const client = new Client({ name: 'parity-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      // Every toolset, so each tool answers with its own validation rather than tool_not_enabled.
      requestInit: { headers: { authorization: `Bearer ${org.token}`, 'x-mcp-toolsets': 'all' } },
      // The official client over the app's own fetch entry point: real HTTP semantics, no socket.
      fetch: async (url, init) => t.app.request(url, init),
    });
    await client.connect(transport);
    try {
      let compared = 0;
      for (const { route, url, input } of probes) {
        const label = `${route.method} ${route.path} (${route.tool.name})`;
        const res = await t.request(route.method, url, {
          token: org.token,
          ...(route.method === 'GET' ? {} : { body: {} }),
        });
        expect(res.status, label).toBeGreaterThanOrEqual(400);
        const rest = envelope.parse(await res.json());
        expect(isErrorCode(rest.code), `${label}: ${rest.code} is in ERROR_TABLE`).toBe(true);
        if (!isErrorCode(rest.code)) continue;
        const form = ERROR_TABLE[rest.code].mcp;

        const call = client.callTool({ name: route.tool.name, arguments: input });
        if (form.kind === 'jsonrpc') {
          await expect(call, label).rejects.toSatisfy((err) => rpcError.parse(err).code === form.code);
        } else {
          const result = callResult.parse(await call);
          expect(result.isError, label).toBe(true);
          const mcp = envelope.parse(JSON.parse(result.content[0]?.text ?? 'null'));
          expect({ error: mcp.error, code: mcp.code }, label).toEqual({ error: rest.error, code: rest.code });
          if (res.status === 400) {
            expect(sortDetails(mcp), label).toEqual(sortDetails(rest));
            expect(sortDetails(rest).length, `${label} names the bad fields`).toBeGreaterThan(0);
          }
        }
        compared++;
      }
      expect(compared).toBeGreaterThan(0);
      expect(compared).toBe(expectedCount);
    } finally {
      await client.close();
    }
  });
});
