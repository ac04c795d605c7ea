// Schema-derived request inputs for test/openapi-fuzz.test.ts: a seeded generator of values that
// match a JSON Schema (so requests reach the handlers) and of values that break it at its edges
// (so validation is exercised). Deterministic for a given seed. Also the JSON Schema validator the
// OpenAPI tests check answers with.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export type JsonSchema = Record<string, unknown>;

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = ('default' in addFormatsModule
  ? addFormatsModule.default
  : addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * A JSON Schema 2020-12 validator (the dialect of OpenAPI 3.1) with the standard formats. Not strict:
 * descriptions and examples sit beside keywords, as the document writes them.
 */
export function createSchemaValidator(): Ajv2020 {
  return addFormats(new Ajv2020({ strict: false, allErrors: false }));
}

/**
 * Inputs the request guard answers with a clean 400 (NUL bytes, lone UTF-16 surrogates, `1e309`),
 * mixed into the generated values so the fuzz checks they never reach a handler as a 5xx.
 */
export const INCLUDE_HOSTILE_INPUTS = true;

/** A deterministic pseudo-random source (mulberry32), so a failing run can be replayed by seed. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

/** Ids of real records, by the resource they were seen under ("leads", "custom-objects/records"). */
export type IdPool = Map<string, Set<string>>;

export interface GenerationContext {
  rng: Rng;
  ids: IdPool;
}

const HEX_ID = /^\^\[0-9a-fA-F\]\{24\}\$$/;

const UNICODE_SAMPLES = [
  'Zoë Ångström',
  '日本語のテキスト',
  'emoji 🎉🚀',
  'עברית',
  'e\u0301',
  'zero\u200bwidth',
];
const TRICKY_STRINGS = [
  '',
  ' ',
  '   padded   ',
  "'; drop table leads; --",
  '<script>alert(1)</script>',
  '%00%ff',
  '../../etc/passwd',
  '{"a":1}',
  'null',
  '-1',
  'true',
  'a'.repeat(10_000),
];
const HOSTILE_STRINGS = ['nul\u0000byte', 'lone \ud800 surrogate', '\udfff'];
const EDGE_NUMBERS = [0, -1, 1, 1.5, -0.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 53), 1e20, -1e20, 1e300];

/** Values for the patterns the document uses (a general regex sampler is not worth its code here). */
const PATTERN_SAMPLES: Record<string, (rng: Rng) => string> = {
  '^[A-Z]{3}$': (rng) => rng.pick(['USD', 'EUR', 'GBP']),
  '^(0|[1-9][0-9]*)$': (rng) => String(rng.int(0, 2)),
  '^\\s*[Hh][Tt][Tt][Pp][Ss]://[^/?#@\\s]+([/?#]\\S*)?\\s*$': (rng) =>
    `https://example.com/${randomHex(rng, 6)}`,
  '^\\d{4}-\\d{2}-\\d{2}$': (rng) => `2026-0${rng.int(1, 9)}-${rng.int(10, 28)}`,
  '^\\+\\d{7,15}$': (rng) => `+4930${rng.int(1_000_000, 9_999_999)}`,
  '^[a-z][a-z0-9_]{0,63}$': (rng) => `f_${randomHex(rng, 6)}`,
};

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(schema: JsonSchema): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t) => typeof t === 'string');
  return [];
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function randomHex(rng: Rng, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += '0123456789abcdef'[rng.int(0, 15)];
  return out;
}

/** The pool a field's ids come from, guessed from its name (lead_id -> leads, owner_id -> users). */
function poolForField(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const base = name.replace(/_ids?$/, '');
  if (['owner', 'assigned_to', 'user', 'created_by', 'heir', 'transfer_to'].includes(base)) return 'users';
  if (base === 'custom_object' || base === 'object') return 'custom-objects';
  return `${base.replace(/_/g, '-')}s`;
}

/** A real id when one is known (most of the time), else a well-formed id nobody has. */
export function pickId(ctx: GenerationContext, pool: string | undefined): string {
  const preferred = pool ? ctx.ids.get(pool) : undefined;
  const all = [...ctx.ids.values()].flatMap((set) => [...set]);
  const candidates = preferred && preferred.size > 0 ? [...preferred] : all;
  if (candidates.length > 0 && ctx.rng.chance(0.8)) return ctx.rng.pick(candidates);
  return randomHex(ctx.rng, 24);
}

function sampleString(schema: JsonSchema, ctx: GenerationContext, name: string | undefined): string {
  const { rng } = ctx;
  if (typeof schema.pattern === 'string' && HEX_ID.test(schema.pattern))
    return pickId(ctx, poolForField(name));
  const format = schema.format;
  if (format === 'email') return `fuzz-${randomHex(rng, 8)}@example.test`;
  if (format === 'date-time')
    return new Date(Date.UTC(2026, rng.int(0, 11), rng.int(1, 28), 12)).toISOString();
  if (format === 'date')
    return `2026-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
  if (format === 'uri') return `https://example.com/${randomHex(rng, 6)}`;
  const fromPattern = typeof schema.pattern === 'string' ? PATTERN_SAMPLES[schema.pattern] : undefined;
  if (fromPattern) return fromPattern(rng);
  if (format === 'uuid') return '3f2a0c5e-8b1d-4c7a-9e6f-1a2b3c4d5e6f';
  const min = numberOr(schema.minLength, 0);
  const max = Math.min(numberOr(schema.maxLength, 40), Math.max(min, 40));
  const base = rng.chance(0.3) ? rng.pick(UNICODE_SAMPLES) : `fuzz ${randomHex(rng, 6)}`;
  let text = base;
  while ([...text].length < min) text += 'x';
  const chars = [...text];
  return chars.length > max ? chars.slice(0, Math.max(min, max)).join('') : text;
}

function sampleNumber(schema: JsonSchema, rng: Rng, integer: boolean): number {
  const exclusiveMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
  const exclusiveMax = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined;
  const min = numberOr(schema.minimum, exclusiveMin ?? 0);
  const max = numberOr(schema.maximum, exclusiveMax ?? Math.max(min + 100, 100));
  // Two decimals at most: money fields refuse more, and nothing else needs more.
  const value = Math.round((min + rng.next() * (max - min)) * 100) / 100;
  return integer ? Math.max(Math.ceil(min), Math.min(Math.floor(max), Math.round(value))) : value;
}

/** `base` with a branch's extra constraints: its required names added, its property schemas merged in. */
function mergeSchemas(base: JsonSchema, branch: unknown): JsonSchema {
  if (!isRecord(branch)) return base;
  const baseProperties = isRecord(base.properties) ? base.properties : {};
  const branchProperties = isRecord(branch.properties) ? branch.properties : {};
  const properties: Record<string, unknown> = { ...baseProperties };
  for (const [key, extra] of Object.entries(branchProperties)) {
    const own = baseProperties[key];
    properties[key] = isRecord(own) && isRecord(extra) ? { ...own, ...extra } : extra;
  }
  const required = [
    ...new Set([
      ...(Array.isArray(base.required) ? base.required : []),
      ...(Array.isArray(branch.required) ? branch.required : []),
    ]),
  ];
  return { ...base, properties, required };
}

/** A value that the schema accepts, as far as JSON Schema says (refinements may still refuse it). */
export function validValue(schema: unknown, ctx: GenerationContext, name?: string, depth = 0): unknown {
  if (!isRecord(schema)) return null;
  const { rng } = ctx;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum);
  const union = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined;
  if (union && union.length > 0 && (typesOf(schema).length > 0 || isRecord(schema.properties))) {
    // Branches that only add constraints to a typed schema ("at least one of these fields").
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    return validValue(mergeSchemas(rest, rng.pick(union)), ctx, name, depth);
  }
  if (union && union.length > 0) {
    // Prefer a non-null branch: null is valid but reaches less code.
    const nonNull = union.filter((branch) => !(isRecord(branch) && branch.type === 'null'));
    return validValue(rng.pick(nonNull.length > 0 && rng.chance(0.85) ? nonNull : union), ctx, name, depth);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0)
    return validValue(schema.allOf[0], ctx, name, depth);
  const types = typesOf(schema);
  const type = types.length > 0 ? rng.pick(types) : isRecord(schema.properties) ? 'object' : 'string';
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
      return sampleNumber(schema, rng, true);
    case 'number':
      return sampleNumber(schema, rng, false);
    case 'array': {
      const min = numberOr(schema.minItems, 0);
      const max = Math.min(numberOr(schema.maxItems, 3), min + 3);
      const length = depth > 3 ? min : rng.int(min, Math.max(min, max));
      return Array.from({ length }, () => validValue(schema.items, ctx, name, depth + 1));
    }
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(properties)) {
        if (required.includes(key) || (depth < 4 && rng.chance(0.6)))
          out[key] = validValue(property, ctx, key, depth + 1);
      }
      if (isRecord(schema.additionalProperties) && depth < 3 && rng.chance(0.3)) {
        out[`extra_${randomHex(rng, 4)}`] = validValue(
          schema.additionalProperties,
          ctx,
          undefined,
          depth + 1,
        );
      }
      return out;
    }
    default:
      return sampleString(schema, ctx, name);
  }
}

/** A value at or past the schema's edges: wrong types, empty or over-long strings, huge numbers. */
export function edgeValue(schema: unknown, ctx: GenerationContext): unknown {
  const { rng } = ctx;
  const s = isRecord(schema) ? schema : {};
  const choices: (() => unknown)[] = [
    () => rng.pick(TRICKY_STRINGS),
    () => rng.pick(UNICODE_SAMPLES),
    () => rng.pick(EDGE_NUMBERS),
    () => rng.chance(0.5),
    () => null,
    () => [],
    () => [rng.pick(TRICKY_STRINGS)],
    () => ({}),
    () => ({ nested: { deeper: [1, 'two', null] } }),
    () => randomHex(rng, 24),
    () => randomHex(rng, 23),
  ];
  if (typeof s.maxLength === 'number') choices.push(() => 'y'.repeat((s.maxLength as number) + 1));
  if (typeof s.minLength === 'number' && s.minLength > 0)
    choices.push(() => 'y'.repeat((s.minLength as number) - 1));
  if (typeof s.maximum === 'number') choices.push(() => (s.maximum as number) + 1);
  if (typeof s.minimum === 'number') choices.push(() => (s.minimum as number) - 1);
  if (typeof s.maxItems === 'number')
    choices.push(() => Array.from({ length: (s.maxItems as number) + 1 }, () => 'z'));
  if (Array.isArray(s.enum)) choices.push(() => `${String(rng.pick(s.enum as unknown[]))}x`);
  if (INCLUDE_HOSTILE_INPUTS) choices.push(() => rng.pick(HOSTILE_STRINGS));
  return rng.pick(choices)();
}

/** An object for an object schema with one kind of fault: a required field gone, one field broken, an unknown field. */
export function invalidObject(schema: JsonSchema, ctx: GenerationContext): unknown {
  const { rng } = ctx;
  const base = validValue(schema, ctx);
  const valid = isRecord(base) ? base : {};
  const properties = isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
  const fault = rng.int(0, 5);
  if (fault === 0 && required.length > 0) {
    const { [rng.pick(required)]: _dropped, ...rest } = valid;
    return rest;
  }
  if (fault === 1) return { ...valid, [`unknown_${randomHex(rng, 4)}`]: edgeValue({}, ctx) };
  if (fault === 2) return rng.pick<unknown>([[], 'a string', 42, null, [valid]]);
  if (properties.length > 0) {
    const key = rng.pick(properties);
    const property = isRecord(schema.properties) ? schema.properties[key] : undefined;
    return { ...valid, [key]: edgeValue(property, ctx) };
  }
  return { ...valid, [`unknown_${randomHex(rng, 4)}`]: 1 };
}

/** How a value travels in a query string or a path segment. */
export function asParameterText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
  return JSON.stringify(value);
}

/** JSON text for a body; with hostile inputs on, sometimes a number JSON cannot hold (`1e309`). */
export function bodyText(value: unknown, rng: Rng): string {
  const text = JSON.stringify(value);
  if (INCLUDE_HOSTILE_INPUTS && rng.chance(0.05)) return text.replace(/(:\s*)-?\d+(\.\d+)?/, '$11e309');
  return text;
}
