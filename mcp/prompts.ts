// MCP prompts: the templates the areas declare (core/prompts.ts). prompts/list shows a prompt only
// to a caller who may use every read tool it needs; prompts/get validates the arguments with the
// prompt's zod schema and builds the messages from records read through those tools (invokeTool,
// the caller's access and organization). An unknown prompt, bad arguments or an id that names no
// record of the caller's organization is -32602 with the REST envelope as `data`, so a client shows
// which argument is wrong. Prompts are not narrowed by toolsets (docs/decisions.md).
import {
  type GetPromptResult,
  type Prompt as McpPrompt,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import type { Prompt, PromptContext } from '../core/prompts.ts';
import { RESOURCE_MIME_TYPE, recordUri } from '../core/resources.ts';
import type { Services } from '../core/services.ts';
import { findTool, PROMPTS } from '../tools/index.ts';
import { protocolErrorOf } from './protocol-errors.ts';

function mayUse(name: string, call: CallContext): boolean {
  const tool = findTool(name);
  return tool !== undefined && canSee(tool, call);
}

/** The prompts the caller may use. */
export function visiblePrompts(call: CallContext): Prompt[] {
  return PROMPTS.filter((prompt) => prompt.reads.every((name) => mayUse(name, call)));
}

/** A prompt's arguments as prompts/list shows them, from its zod schema. */
function argumentsOf(prompt: Prompt): NonNullable<McpPrompt['arguments']> {
  return Object.entries(prompt.arguments.shape).map(([name, field]) => ({
    name,
    ...(field.description !== undefined && { description: field.description }),
    required: !(field instanceof z.ZodOptional),
  }));
}

const listings = new WeakMap<Prompt, McpPrompt>();

function listingOf(prompt: Prompt): McpPrompt {
  let listing = listings.get(prompt);
  if (!listing) {
    listing = {
      name: prompt.name,
      title: prompt.title,
      description: prompt.description,
      arguments: argumentsOf(prompt),
    };
    listings.set(prompt, listing);
  }
  return listing;
}

const recordObject = z.record(z.string(), z.unknown());

function contextFor(prompt: Prompt, call: CallContext, services: Services): PromptContext {
  const allowed = new Set([...prompt.reads, ...(prompt.optionalReads ?? [])]);
  return {
    async read(name, input) {
      const tool = findTool(name);
      // A prompt reads only what it declared: what prompts/list checked is what it may use.
      if (!tool || !allowed.has(name))
        throw new Error(`Prompt ${prompt.name} reads ${name}, which it did not declare`);
      return recordObject.parse(await invokeTool(tool, input, call, services));
    },
    canRead: (name) => allowed.has(name) && mayUse(name, call),
    record: (collection, id, json) => ({
      type: 'resource',
      resource: { uri: recordUri(collection, id), mimeType: RESOURCE_MIME_TYPE, text: JSON.stringify(json) },
    }),
    userId: call.auth.userId,
    now: new Date(),
  };
}

async function getPrompt(
  name: string,
  args: Record<string, string> | undefined,
  call: CallContext,
  services: Services,
): Promise<GetPromptResult> {
  const prompt = visiblePrompts(call).find((candidate) => candidate.name === name);
  if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  try {
    const built = await prompt.build(args ?? {}, contextFor(prompt, call, services));
    return { description: built.description, messages: built.messages };
  } catch (err) {
    throw protocolErrorOf(err, call, services, `prompts/get ${name}`);
  }
}

/** The prompt handlers, for a server the prompts capability is declared on. */
export function registerPrompts(server: Server, call: CallContext, services: Services): void {
  server.setRequestHandler('prompts/list', () => ({ prompts: visiblePrompts(call).map(listingOf) }));
  server.setRequestHandler('prompts/get', (request) =>
    getPrompt(request.params.name, request.params.arguments, call, services),
  );
}
