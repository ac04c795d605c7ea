// completion/complete: suggestions for an argument being typed.
// - The `id` of a record resource template (`crm://leads/{id}`) and a prompt argument holding a
//   record id (core/prompts.ts `recordArguments`): the ids of the records whose name matches what
//   was typed, found with the record type's own list tool and its `search` (so tenancy and access
//   are the list tool's), names starting with the text first, at most 100.
// - An enum argument of a prompt: its values starting with the text.
// Anything else (an unknown template, prompt or argument, or one the caller may not read) completes
// to nothing, as the specification allows, rather than failing.
import type { CompleteRequestParams, CompleteResult, Server } from '@modelcontextprotocol/server';
import { AppError } from '../core/errors.ts';
import { type CallContext, canSee, invokeTool } from '../core/invoke.ts';
import { enumValues } from '../core/prompts.ts';
import type { RecordResource } from '../core/resources.ts';
import type { Services } from '../core/services.ts';
import { RESOURCES } from '../tools/index.ts';
import { visiblePrompts } from './prompts.ts';
import { protocolErrorOf } from './protocol-errors.ts';
import { recordsOf, resourceOfTemplate } from './resources.ts';

/** The most values a completion may carry (the specification's limit). */
export const MAX_COMPLETIONS = 100;

type Completion = CompleteResult['completion'];

const NOTHING: Completion = { values: [], total: 0, hasMore: false };

function prefixed(values: readonly string[], typed: string): Completion {
  const lower = typed.toLowerCase();
  const matching = values.filter((value) => value.toLowerCase().startsWith(lower));
  return {
    values: matching.slice(0, MAX_COMPLETIONS),
    total: matching.length,
    hasMore: matching.length > MAX_COMPLETIONS,
  };
}

/** Record ids whose name matches `typed`, through the record type's list tool; nothing when it may not be read. */
async function recordIds(
  resource: RecordResource,
  typed: string,
  call: CallContext,
  services: Services,
): Promise<Completion> {
  if (!canSee(resource.list, call)) return NOTHING;
  const text = typed.trim();
  const input =
    text.length === 0
      ? { page: 1, limit: MAX_COMPLETIONS, sort: resource.recentSort }
      : { page: 1, limit: MAX_COMPLETIONS, search: text.slice(0, 200) };
  let output: unknown;
  try {
    output = await invokeTool(resource.list, input, call, services);
  } catch (err) {
    // Text the search cannot take (say, only punctuation) matches nothing.
    if (err instanceof AppError && err.code === 'validation_failed') return NOTHING;
    throw err;
  }
  const records = recordsOf(resource, output);
  const lower = text.toLowerCase();
  // Names that start with the text come first; the search's own order (relevance) within each part.
  const starts = records.filter((record) => resource.label(record).toLowerCase().startsWith(lower));
  const others = records.filter((record) => !resource.label(record).toLowerCase().startsWith(lower));
  const values = [...starts, ...others].map((record) => record._id);
  const total =
    typeof output === 'object' && output !== null && 'total' in output && typeof output.total === 'number'
      ? output.total
      : values.length;
  return { values, total, hasMore: total > values.length };
}

async function complete(
  params: CompleteRequestParams,
  call: CallContext,
  services: Services,
): Promise<Completion> {
  const { ref, argument } = params;
  if (ref.type === 'ref/resource') {
    const resource = resourceOfTemplate(ref.uri);
    if (!resource || argument.name !== 'id') return NOTHING;
    return recordIds(resource, argument.value, call, services);
  }
  const prompt = visiblePrompts(call).find((candidate) => candidate.name === ref.name);
  const field = prompt?.arguments.shape[argument.name];
  if (!prompt || !field) return NOTHING;
  const collection = prompt.recordArguments?.[argument.name];
  const resource = RESOURCES.find((candidate) => candidate.collection === collection);
  if (resource) return recordIds(resource, argument.value, call, services);
  const values = enumValues(field);
  return values ? prefixed(values, argument.value) : NOTHING;
}

/** The completion handler, for a server the completions capability is declared on. */
export function registerCompletion(server: Server, call: CallContext, services: Services): void {
  server.setRequestHandler('completion/complete', async (request) => {
    try {
      return { completion: await complete(request.params, call, services) };
    } catch (err) {
      throw protocolErrorOf(err, call, services, 'completion/complete');
    }
  });
}
