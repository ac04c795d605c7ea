// How a successful tool output reaches a model. The text copy is compact JSON; a paged list adds a
// second text item saying how to get the next page; and a result too large for a model's context
// is cut to a budget with a note on how to ask for less (a read) or shortened with a note that it
// was saved (a write), instead of flooding the conversation.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Tool } from '../core/tool.ts';

/** Characters of result text one tool call may return: about 20,000 tokens at ~4 characters each. */
export const RESULT_BUDGET_CHARS = 80_000;

/** List parameters that page or order a list rather than filter it. */
const PAGING_PARAMS: ReadonlySet<string> = new Set(['page', 'limit', 'sort', 'search']);

export interface PageInfo {
  /** The envelope key holding the items (`leads`, `users`, `items`, ...). */
  key: string;
  items: number;
  total: number;
  page: number;
  limit: number;
  totalPages: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads the paged envelope `{<items>: [...], total, page, limit, totalPages}`, if the output is one. */
export function pageInfoOf(output: unknown): PageInfo | undefined {
  if (!isRecord(output)) return undefined;
  const { total, page, limit, totalPages } = output;
  if (
    typeof total !== 'number' ||
    typeof page !== 'number' ||
    typeof limit !== 'number' ||
    typeof totalPages !== 'number'
  ) {
    return undefined;
  }
  const lists = Object.entries(output).filter((entry): entry is [string, unknown[]] =>
    Array.isArray(entry[1]),
  );
  const [list] = lists;
  if (!list || lists.length !== 1) return undefined;
  return { key: list[0], items: list[1].length, total, page, limit, totalPages };
}

/** The note after a page of a list: how to get the next one, or that the page is past the end. */
export function pageNote(toolName: string, info: PageInfo): string | undefined {
  if (info.page < info.totalPages) {
    return (
      `Showing page ${info.page} of ${info.totalPages} (${info.total} total). ` +
      `Call ${toolName} with page=${info.page + 1} and the same other arguments for more.`
    );
  }
  if (info.items === 0 && info.total > 0) {
    return `Page ${info.page} is past the end: there are ${info.totalPages} pages (${info.total} total).`;
  }
  return undefined;
}

/** The first `budget` characters of `text`, never ending in half of a surrogate pair. */
export function cutText(text: string, budget: number = RESULT_BUDGET_CHARS): string {
  if (text.length <= budget) return text;
  const code = text.charCodeAt(budget - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? budget - 1 : budget;
  return text.slice(0, end);
}

function orList(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** Tells a model which arguments of this tool make the result smaller. */
function narrowingAdvice(tool: Tool, info: PageInfo | undefined, fullLength: number, budget: number): string {
  const params = Object.keys(tool.input.shape);
  const ways: string[] = [];
  if (params.includes('limit')) {
    // Items are assumed to be of similar size; the margin keeps the suggestion under the budget.
    const fitting = info ? Math.max(1, Math.floor((info.items * budget * 0.8) / fullLength)) : undefined;
    ways.push(fitting ? `a smaller \`limit\` (about ${fitting} fits)` : 'a smaller `limit`');
  }
  if (params.includes('search')) ways.push('a `search` term');
  const filters = params.filter((name) => !PAGING_PARAMS.has(name) && name !== 'id');
  if (info && filters.length > 0) ways.push(`filters (${orList(filters.map((name) => `\`${name}\``))})`);
  if (ways.length === 0) {
    return 'Ask for less data in one call: fewer items or records per call, or find the records you need with a list tool and its filters first.';
  }
  return `Call ${tool.name} again with ${orList(ways)}.`;
}

function truncationNote(tool: Tool, output: unknown, fullLength: number, budget: number): string {
  return (
    `RESULT TRUNCATED: the full result of ${tool.name} is ${fullLength} characters, over the ` +
    `${budget}-character limit for one tool result (about ${Math.round(budget / 4)} tokens). The text ` +
    'above is only its beginning, so the JSON is incomplete, and no structured result was returned. ' +
    narrowingAdvice(tool, pageInfoOf(output), fullLength, budget)
  );
}

/** A string cut to `max` characters (never half a surrogate pair), marked as cut. */
function cutString(text: string, max: number): string {
  return text.length <= max ? text : `${cutText(text, max)}…`;
}

/** `value` with every string over `maxString` characters and every list over `maxItems` items cut. */
function shortenValue(value: unknown, maxString: number, maxItems: number): unknown {
  if (typeof value === 'string') return cutString(value, maxString);
  if (Array.isArray(value)) return value.slice(0, maxItems).map((v) => shortenValue(v, maxString, maxItems));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, shortenValue(v, maxString, maxItems)]),
    );
  }
  return value;
}

/** Strings this long are texts, never ids, dates or addresses: shortening stops before them. */
const MIN_KEPT_STRING = 400;

/**
 * A view of a write's output that fits `budget`, with the same keys: long texts and lists cut,
 * ids and every short field whole. Undefined when even the shortest such view does not fit.
 */
function shortenedView(output: Record<string, unknown>, budget: number): Record<string, unknown> | undefined {
  for (let maxString = 4000, maxItems = 50; ; ) {
    const view = shortenValue(output, maxString, maxItems);
    if (isRecord(view) && JSON.stringify(view).length <= budget) return view;
    if (maxString === MIN_KEPT_STRING && maxItems === 1) return undefined;
    maxString = Math.max(MIN_KEPT_STRING, Math.floor(maxString / 2));
    maxItems = Math.max(1, Math.floor(maxItems / 2));
  }
}

/** The `_id`s of the records a write returned (its top level and one level down), to name them. */
export function savedIds(output: Record<string, unknown>): string[] {
  const ids: string[] = [];
  const idOf = (value: unknown) => (isRecord(value) && typeof value._id === 'string' ? value._id : undefined);
  const own = idOf(output);
  if (own) ids.push(own);
  for (const value of Object.values(output)) {
    const id = idOf(value);
    if (id) ids.push(id);
  }
  return ids;
}

function shortenedNote(
  tool: Tool,
  output: Record<string, unknown>,
  fullLength: number,
  budget: number,
): string {
  const ids = savedIds(output);
  return (
    `RESULT SHORTENED: ${tool.name} succeeded and its change is saved${ids.length > 0 ? ` (${ids.join(', ')})` : ''}; ` +
    `do not call it again. The full result is ${fullLength} characters, over the ${budget}-character limit for ` +
    'one tool result, so long texts and lists above are cut (a cut text ends with …). Read the record back ' +
    'with its get tool for anything cut.'
  );
}

/**
 * A committed write over the budget: still a success, since an error would make a model repeat a
 * change that is already saved (docs/mcp.md "Result size"). The structured result must be complete
 * and schema-valid for the official clients to accept a success, so it is the shortened view when
 * that still fits the tool's output schema, else the whole output; the text is always the
 * shortened JSON (or its cut prefix) with a note naming the saved records.
 */
function writeResult(
  tool: Tool,
  output: Record<string, unknown>,
  text: string,
  budget: number,
): CallToolResult {
  const view = shortenedView(output, budget);
  const fits = view !== undefined && tool.output.safeParse(view).success;
  const viewText = view ? JSON.stringify(view) : cutText(text, budget);
  return {
    content: [
      { type: 'text', text: viewText },
      { type: 'text', text: shortenedNote(tool, output, text.length, budget) },
    ],
    structuredContent: fits && view ? view : output,
  };
}

/** How a result over the budget was cut: a read truncated (an error), or a write shortened (still a success). */
export interface ResultCut {
  kind: 'truncated' | 'shortened';
  /** Characters of the full result's JSON. */
  fullChars: number;
  budget: number;
}

/** The compact JSON of outputs shapedResult has already written as text (see jsonTextOf). */
const jsonTexts = new WeakMap<object, string>();

/**
 * `JSON.stringify(value)` when shapedResult already wrote it as a result's text, else undefined: a
 * writer of the whole answer (mcp/direct-call.ts) puts the structured content in as this text
 * instead of serialising the output a second time. Outputs are not changed after they are shaped.
 */
export function jsonTextOf(value: object): string | undefined {
  return jsonTexts.get(value);
}

/**
 * The MCP result of a successful call. Within the budget it carries the output twice, as
 * `structuredContent` and as compact JSON text (plus the page note of a list). Over the budget, a
 * read carries only the cut text and the truncation note, and is marked `isError`: MCP requires the
 * structured result of a success to be complete and schema-valid, and the official clients reject a
 * success without one, so a partial read must not pretend to be a success (asking again for less is
 * harmless). A write is never turned into an error once it committed: see writeResult. `cut` says
 * when and how the result was cut (mcp/logging.ts tells a client that set a level).
 */
export function shapedResult(
  tool: Tool,
  output: unknown,
  budget: number = RESULT_BUDGET_CHARS,
): { result: CallToolResult; cut?: ResultCut } {
  // Output schemas are object schemas (checked in schemas.ts) and invokeTool parsed the output.
  if (!isRecord(output)) throw new Error(`Tool ${tool.name} returned a non-object output`);
  const text = JSON.stringify(output);
  if (text.length > budget) {
    if (!tool.annotations.readOnlyHint) {
      return {
        result: writeResult(tool, output, text, budget),
        cut: { kind: 'shortened', fullChars: text.length, budget },
      };
    }
    return {
      result: {
        isError: true,
        content: [
          { type: 'text', text: cutText(text, budget) },
          { type: 'text', text: truncationNote(tool, output, text.length, budget) },
        ],
      },
      cut: { kind: 'truncated', fullChars: text.length, budget },
    };
  }
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  jsonTexts.set(output, text);
  const info = pageInfoOf(output);
  const note = info ? pageNote(tool.name, info) : undefined;
  if (note) content.push({ type: 'text', text: note });
  return { result: { content, structuredContent: output } };
}

/** The MCP result of a successful call (shapedResult without saying how it was cut). */
export function successResult(
  tool: Tool,
  output: unknown,
  budget: number = RESULT_BUDGET_CHARS,
): CallToolResult {
  return shapedResult(tool, output, budget).result;
}
