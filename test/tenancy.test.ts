// Locks in that every REST route taking a record id answers 404 for another organization's record and leaves it untouched.
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { newId } from '../core/ids.ts';
import type { Route } from '../core/route.ts';
import { ROUTES } from '../tools/index.ts';
import { fileTest } from './fixtures/file-test.ts';
import type { KitScope, TenancyVictim } from './fixtures/kit.ts';
import { kitOfTool, loadKits } from './fixtures/load-kits.ts';
import { json } from './helpers.ts';

type JsonSchema = z.core.JSONSchema.JSONSchema;

// `org` is the organization whose records are probed; `other` the intruder: its owner holds every
// permission, and its plan every feature. The request limits are left out: this file sends a few
// requests per route of every area (more than the per-minute budget once the areas grew), and
// test/rate-limits.test.ts covers the limits themselves.
const test = fileTest({ plan: 'enterprise', options: { withoutRateLimits: true } });

const KITS = await loadKits();

/**
 * Each area's victims by path prefix (test/<area>/kit.ts): a victim creates a record of org A that
 * routes under that prefix address by id.
 */
const VICTIMS = new Map<string, (scope: KitScope) => Promise<TenancyVictim>>();
for (const kit of KITS) {
  for (const [prefix, victim] of Object.entries(kit.victims)) {
    if (VICTIMS.has(prefix)) throw new Error(`Two kits declare the tenancy victim ${prefix}`);
    VICTIMS.set(prefix, victim);
  }
}

const isIdParam = (name: string) => name === 'id' || name.endsWith('Id') || name.endsWith('_id');

function pathParams(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) =>
      segment
        .slice(1)
        .replace(/\{.*\}$/, '')
        .replace(/\?$/, ''),
    );
}

/** The static part of a path before its first parameter: `/leads/:id/convert-to-client` -> `/leads`. */
function staticPrefix(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    if (segment.startsWith(':')) break;
    segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

function factoryFor(route: Route): string | undefined {
  const prefix = staticPrefix(route.path);
  return [...VICTIMS.keys()]
    .filter((key) => prefix === key || prefix.startsWith(`${key}/`))
    .sort((a, b) => b.length - a.length)[0];
}

function fillPath(
  path: string,
  id: string,
  named: Record<string, string> = {},
): { url: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const url = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const [name] = pathParams(`/${segment}`);
      const value = name === undefined ? '0' : (named[name] ?? (isIdParam(name) ? id : '0'));
      if (name) params[name] = value;
      return value;
    })
    .join('/');
  return { url: `/api/v1${url}`, params };
}

/** A minimal value satisfying a JSON Schema node (required properties only). */
function sample(schema: JsonSchema | boolean | undefined): unknown {
  if (schema === undefined || typeof schema === 'boolean') return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return sample(alternative);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      // Object-id fields get a well-formed id that names no record.
      if (schema.pattern && new RegExp(schema.pattern).test(newId())) return newId();
      if (schema.format === 'email') return 'probe@example.test';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.test/probe';
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.format === 'date') return new Date().toISOString().slice(0, 10);
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () =>
        sample(Array.isArray(schema.items) ? schema.items[0] : schema.items),
      );
    default: {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key]);
      return out;
    }
  }
}

/**
 * A body the tool's input schema accepts, so the request gets past validation and reaches the
 * lookup that must fail: the victim's own, else the area kit's, else nothing, else one generated
 * from the schema.
 */
function bodyFor(
  route: Route,
  params: Record<string, string>,
  own?: Record<string, unknown>,
): Record<string, unknown> {
  const candidates: Record<string, unknown>[] = [];
  if (own) candidates.push(own);
  const explicit = kitOfTool(KITS, route.tool.name)?.bodies[route.tool.name];
  if (explicit) candidates.push(explicit.body);
  candidates.push({});
  const generated = sample(z.toJSONSchema(route.tool.input, { io: 'input', unrepresentable: 'any' }));
  if (typeof generated === 'object' && generated !== null && !Array.isArray(generated)) {
    candidates.push(Object.fromEntries(Object.entries(generated).filter(([key]) => !(key in params))));
  }
  const body = candidates.find((c) => route.tool.input.safeParse({ ...c, ...params }).success);
  if (!body) {
    throw new Error(
      `No valid input for ${route.method} ${route.path} (${route.tool.name}): add its body to the area's test kit`,
    );
  }
  return body;
}

const ID_ROUTES = ROUTES.filter((r) => pathParams(r.path).some(isIdParam));
const label = (r: Route) => `${r.method} ${r.path} (${r.tool.name})`;

describe('REST routes addressing a record by id', () => {
  test('exist, and each has a fixture factory for its resource', () => {
    expect(ID_ROUTES.length).toBeGreaterThan(0);
    const uncovered = ID_ROUTES.filter((r) => factoryFor(r) === undefined).map(label);
    expect(uncovered, "routes with an id parameter but no tenancy victim in their area's test kit").toEqual(
      [],
    );
  });

  for (const route of ID_ROUTES) {
    test(`${label(route)} answers 404 to another organization and changes nothing`, async ({
      t,
      org,
      other,
    }) => {
      const prefix = factoryFor(route);
      if (!prefix) throw new Error(`No tenancy victim covers ${label(route)}`);
      const victim = VICTIMS.get(prefix);
      if (!victim) throw new Error(`No kit declares the tenancy victim ${prefix}`);
      const fixture = await victim({ t, org });
      const { url, params } = fillPath(route.path, fixture.id, fixture.params);
      const body = route.method === 'GET' ? undefined : bodyFor(route, params, fixture.body);
      const before = await fixture.read();

      const res = await t.request(route.method, url, { token: other.token, body });
      const payload = await json(res);
      expect({ status: res.status, error: payload.error, code: payload.code }).toEqual({
        status: 404,
        error: 'Not found',
        // The tool's own lookup answered, not the router's "no such route".
        code: 'not_found',
      });
      expect(await fixture.read()).toEqual(before);

      // Control: the owning organization does find the record, so the 404 above is tenancy at work.
      const own = await t.request(route.method, url, { token: org.token, body });
      expect(own.status).not.toBe(404);
    });
  }
});
