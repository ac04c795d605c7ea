// A prompt template an area offers over MCP (`prompts` of defineArea): a named conversation starter
// a person picks in their assistant ("prepare for a call with this lead"), grounded in the records
// it names. Its arguments are a zod object of strings (MCP prompt arguments are strings), each
// field described; it reads records only through read tools named here, which run through the call
// pipeline with the caller's access, so a prompt can never show what the caller could not read
// with the tools themselves. The MCP surface (mcp/prompts.ts) lists a prompt only to callers who
// may use every tool in `reads`. docs/mcp.md "Prompts".
import { z } from 'zod';
import { AppError } from './errors.ts';
import { zodDetails } from './invoke.ts';

/** A text block of a prompt message. */
export interface PromptText {
  type: 'text';
  text: string;
}

/** A record embedded in a prompt message: its resource URI and its JSON as the read tool answered it. */
export interface PromptRecord {
  type: 'resource';
  resource: { uri: string; mimeType: string; text: string };
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: PromptText | PromptRecord;
}

export interface PromptResult {
  description: string;
  messages: PromptMessage[];
}

/** What a prompt's `build` may use. */
export interface PromptContext {
  /**
   * Runs a read tool (by name, one of `reads` or `optionalReads`) with the caller's access, through
   * the same pipeline as tools/call. A refusal or a missing record throws its AppError.
   */
  read(tool: string, input: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Whether the caller may use a read tool; for the parts of a prompt that are `optionalReads`. */
  canRead(tool: string): boolean;
  /** A record embedded as a message block: its URI, and its JSON. */
  record(collection: string, id: string, json: unknown): PromptRecord;
  /** The calling user's id (for "mine"). */
  userId: string;
  now: Date;
}

export interface PromptDefinition<A extends z.ZodObject> {
  /** snake_case, e.g. `prepare_call`. */
  name: string;
  title: string;
  /** For the person choosing it and the model reading it. */
  description: string;
  arguments: A;
  /** The read tools it needs: listed only to callers who may use every one. */
  reads: readonly string[];
  /** Read tools whose part the prompt leaves out (saying so) when the caller may not use them. */
  optionalReads?: readonly string[];
  /** Arguments holding record ids, by the resource collection whose ids complete them (`lead_id: 'leads'`). */
  recordArguments?: Readonly<Record<string, string>>;
  /** The messages; `args` are validated by `arguments` first. */
  build(args: z.output<A>, ctx: PromptContext): Promise<PromptResult>;
}

/** A defined prompt: its `build` takes the raw MCP arguments and validates them itself. */
export interface Prompt extends Omit<PromptDefinition<z.ZodObject>, 'build'> {
  /** Validates `raw` with `arguments` (a 400 `validation_failed` naming each argument), then builds. */
  build(raw: unknown, ctx: PromptContext): Promise<PromptResult>;
}

const PROMPT_NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/;

/** Checks a prompt when its area's module loads: its name, described string arguments, its id arguments. */
export function definePrompt<A extends z.ZodObject>(prompt: PromptDefinition<A>): Prompt {
  if (!PROMPT_NAME.test(prompt.name)) throw new Error(`Prompt name "${prompt.name}" must be snake_case`);
  for (const [key, field] of Object.entries(prompt.arguments.shape)) {
    const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
    if (!(inner instanceof z.ZodString || inner instanceof z.ZodEnum)) {
      throw new Error(`Prompt ${prompt.name}: argument ${key} must be a string or an enum of strings`);
    }
    if (!field.description) throw new Error(`Prompt ${prompt.name}: argument ${key} has no description`);
  }
  for (const key of Object.keys(prompt.recordArguments ?? {})) {
    if (!(key in prompt.arguments.shape)) throw new Error(`Prompt ${prompt.name}: no argument ${key}`);
  }
  return {
    ...prompt,
    async build(raw, ctx) {
      const parsed = prompt.arguments.safeParse(raw ?? {});
      if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
      return prompt.build(parsed.data, ctx);
    },
  };
}

/** The values of an enum argument (optional or not), or undefined for a free-text one. */
export function enumValues(field: z.ZodType): readonly string[] | undefined {
  const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
  if (inner instanceof z.ZodEnum) return inner.options.map(String);
  return undefined;
}
