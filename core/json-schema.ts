// Each tool's JSON Schemas, converted from its zod schemas once per process. The per-request MCP
// servers, tools/list and the manifest all read this cache, so a large registry costs nothing per
// request beyond filtering.
//
// Two forms: the full one (jsonSchemasOf) that the OpenAPI document publishes, and the compact one
// (mcpSchemasOf) that tools/list and the manifest show a model, whose every token is paid for in
// each conversation (docs/mcp.md "Tool list size"). The compact form only ever drops or merges
// keywords, so every value the full schema accepts it accepts too: the server still validates
// inputs with the zod schemas, and a client validating structuredContent against the compact
// output schema never rejects a real result.
import { z } from 'zod';
import { OBJECT_ID_PATTERN } from './ids.ts';
import type { Tool } from './tool.ts';

/** The root MCP requires of tool schemas: an object schema whose parts are plain JSON. */
const objectJsonSchema = z.looseObject({
  type: z.literal('object'),
  properties: z.record(z.string(), z.json()).optional(),
  required: z.array(z.string()).optional(),
});

export type ObjectJsonSchema = z.infer<typeof objectJsonSchema>;

export interface ToolJsonSchemas {
  input: ObjectJsonSchema;
  output: ObjectJsonSchema;
}

function convert(tool: Tool, schema: z.ZodType, io: 'input' | 'output'): ObjectJsonSchema {
  let json: unknown;
  try {
    // `$schema` is dropped: MCP reads dialect-less schemas as 2020-12, and older validators
    // (draft-07 AJV in 1.x clients) reject a 2020-12 `$schema` they do not know.
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io });
    json = rest;
  } catch (err) {
    throw new Error(`Tool ${tool.name}: its ${io} schema cannot be expressed as JSON Schema`, { cause: err });
  }
  return asObjectSchema(tool, json, io);
}

function asObjectSchema(tool: Tool, json: unknown, io: 'input' | 'output'): ObjectJsonSchema {
  const parsed = objectJsonSchema.safeParse(json);
  if (!parsed.success) throw new Error(`Tool ${tool.name}: its ${io} schema must be an object schema`);
  return parsed.data;
}

const cache = new WeakMap<Tool, ToolJsonSchemas>();

/** The tool's input (what a caller may send) and output (what it returns) JSON Schemas, memoised. */
export function jsonSchemasOf(tool: Tool): ToolJsonSchemas {
  let schemas = cache.get(tool);
  if (!schemas) {
    schemas = { input: convert(tool, tool.input, 'input'), output: convert(tool, tool.output, 'output') };
    cache.set(tool, schemas);
  }
  return schemas;
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords that constrain only values of their own type, so they may sit beside `type: [T, "null"]`. */
const TYPE_SPECIFIC = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
]);

const isNullSchema = (node: unknown) =>
  isNode(node) && node.type === 'null' && Object.keys(node).length === 1;

/**
 * `{anyOf: [X, {type: "null"}]}` as `X` with `type: [X.type, "null"]` (and null in its enum), when
 * that means the same: X has one type and only keywords that ignore null. Else undefined.
 */
function mergedNullable(node: Node): Node | undefined {
  const alternatives = node.anyOf;
  if (!Array.isArray(alternatives) || alternatives.length !== 2) return undefined;
  const other = alternatives.find((alternative) => !isNullSchema(alternative));
  if (!isNode(other) || !alternatives.some(isNullSchema) || typeof other.type !== 'string') return undefined;
  const merged: Node = {};
  for (const [key, value] of Object.entries(other)) {
    if (key === 'type' || key === 'description') continue;
    if (key === 'enum' && Array.isArray(value)) merged.enum = [...value, null];
    else if (TYPE_SPECIFIC.has(key)) merged[key] = value;
    else return undefined;
  }
  const { anyOf: _alternatives, ...rest } = node;
  const description = rest.description ?? other.description;
  return {
    ...(description !== undefined && { description }),
    ...rest,
    type: [other.type, 'null'],
    ...merged,
  };
}

/** An object's keys are strings: a propertyNames schema saying only that adds nothing. */
const saysOnlyString = (node: unknown) =>
  isNode(node) &&
  node.type === 'string' &&
  Object.keys(node).every((key) => key === 'type' || key === 'description');

/**
 * An input schema as a model needs it: the same shape, fields, descriptions, enums, defaults,
 * number ranges and list sizes, without what repeats or rarely matters to a model: a `pattern`
 * beside the `format` it spells out, the record-id pattern (the server instructions say once that
 * ids are 24 hex characters, and the field descriptions say which id), string lengths (a text over
 * its limit is refused with a 400 naming the field and the limit), the safe-integer bounds zod adds
 * to every integer, and `anyOf` for a nullable scalar.
 */
/** Enums longer than this are left to the field's description in the compact input. */
const LONG_ENUM = 50;

function compactInput(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactInput);
  if (!isNode(value)) return value;
  const node = mergedNullable(value) ?? value;
  const out: Node = {};
  for (const [key, child] of Object.entries(node)) {
    if (key === 'pattern' && (typeof node.format === 'string' || child === OBJECT_ID_PATTERN.source))
      continue;
    if (key === 'minimum' && child === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && child === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'propertyNames' && saysOnlyString(child)) continue;
    if (key === 'minLength' || key === 'maxLength') continue;
    // A long list of codes (ISO 4217 currencies: 166 of them, in ten tools) costs a model a kilobyte
    // a field; the field's description names the standard, and the server checks the value.
    if (key === 'enum' && Array.isArray(child) && child.length > LONG_ENUM) continue;
    if (key === 'properties' && isNode(child)) {
      out.properties = Object.fromEntries(
        Object.entries(child).map(([name, field]) => [name, compactInput(field)]),
      );
    } else if (
      ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'propertyNames'].includes(key)
    ) {
      out[key] = compactInput(child);
    } else {
      out[key] = child;
    }
  }
  return out;
}

/** The JSON type(s) a schema admits, looking through anyOf/oneOf; undefined when any value may do. */
function typesOf(node: Node): string[] | undefined {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((type): type is string => typeof type === 'string');
  const alternatives = node.anyOf ?? node.oneOf;
  if (!Array.isArray(alternatives)) return undefined;
  const types = new Set<string>();
  for (const alternative of alternatives) {
    const own = isNode(alternative) ? typesOf(alternative) : undefined;
    if (!own) return undefined;
    for (const type of own) types.add(type);
  }
  return [...types];
}

/**
 * A field of a tool's output, one level below the result: its type, description and enum, and for
 * a list the type and description of its items. Deeper structure is left out: the result itself
 * (structuredContent and its JSON text) shows every field, and the same record shapes would
 * otherwise be repeated in dozens of tools.
 */
function outputField(value: unknown, depth: number): unknown {
  if (!isNode(value)) return value === false ? false : {};
  const out: Node = {};
  const types = typesOf(value);
  if (types && types.length > 0) out.type = types.length === 1 ? types[0] : types;
  if (depth === 1 && Array.isArray(value.enum)) out.enum = value.enum;
  if (depth === 1 && types?.includes('array') && value.items !== undefined) {
    out.items = outputField(value.items, depth + 1);
  }
  return out;
}

/**
 * An output schema as a model needs it: the result's own fields and their types. Descriptions,
 * `required` and `additionalProperties` are left out: the description of the tool says what it
 * returns, and every result carries its fields anyway.
 */
function compactOutput(schema: ObjectJsonSchema): Node {
  const out: Node = { type: 'object' };
  if (typeof schema.description === 'string') out.description = schema.description;
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, field]) => [name, outputField(field, 1)]),
    );
  }
  // `additionalProperties` is left out, false or not: the result shows its own fields, a model
  // learns nothing from being told there are no others, and every tool of the list paid 27 bytes for it.
  return out;
}

/** The root's own description: over MCP the tool's description is where a model reads what to send. */
function withoutRootDescription(schema: unknown): unknown {
  if (!isNode(schema)) return schema;
  const { description: _description, ...rest } = schema;
  return rest;
}

const mcpCache = new WeakMap<Tool, ToolJsonSchemas>();

/** The compact schemas tools/list and the manifest show (see the top of this file), memoised. */
export function mcpSchemasOf(tool: Tool): ToolJsonSchemas {
  let schemas = mcpCache.get(tool);
  if (!schemas) {
    const full = jsonSchemasOf(tool);
    schemas = {
      input: asObjectSchema(tool, withoutRootDescription(compactInput(full.input)), 'input'),
      output: asObjectSchema(tool, compactOutput(full.output), 'output'),
    };
    mcpCache.set(tool, schemas);
  }
  return schemas;
}
