// Locks in that every field of every tool's input and output schema carries a description, since a model sees only those words.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TOOLS } from '../tools/index.ts';

type JsonSchema = z.core.JSONSchema.JSONSchema;

/** Paths of object properties without a description, walking nested objects, arrays and unions. */
function undescribed(schema: JsonSchema | boolean | undefined, path: string, out: string[]): void {
  if (schema === undefined || typeof schema === 'boolean') return;
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const childPath = `${path}.${key}`;
    if (typeof child !== 'boolean' && child.description === undefined) out.push(childPath);
    undescribed(child, childPath, out);
  }
  const items = Array.isArray(schema.items) ? schema.items : schema.items ? [schema.items] : [];
  for (const item of items) undescribed(item, `${path}[]`, out);
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])])
    undescribed(alternative, path, out);
}

describe('tool schemas', () => {
  for (const tool of TOOLS) {
    it(`${tool.name} describes every input and output field`, () => {
      const missing: string[] = [];
      undescribed(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }), 'input', missing);
      undescribed(z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }), 'output', missing);
      expect(missing).toEqual([]);
    });
  }
});
