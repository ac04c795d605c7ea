// Each tool's JSON Schemas, converted from its zod schemas once per process. The per-request MCP
// servers, tools/list and the manifest all read this cache, so a large registry costs nothing per
// request beyond filtering.
import { z } from 'zod';
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
