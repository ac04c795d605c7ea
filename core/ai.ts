// The model port: a chat-completion model the server may ask for text (proposal discovery
// questions first). core/services.ts builds the production adapter (providers/ai-chat.ts, an
// OpenAI-compatible endpoint) when AI_BASE_URL, AI_API_KEY and AI_MODEL are set, and none
// otherwise: every caller must work without a model (its rule-based answer).

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatOptions {
  /** Aborts the call (the adapter adds its own timeout on top). */
  signal?: AbortSignal | undefined;
  /** Ask for a JSON object answer when the endpoint supports it. */
  json?: boolean | undefined;
}

export interface ChatModel {
  /** The model name sent with each request (for logs and the answer's provenance). */
  readonly model: string;
  /** The assistant message's text; throws on a transport error, a non-2xx answer or an empty reply. */
  complete(messages: readonly ChatMessage[], options?: ChatOptions): Promise<string>;
  /**
   * The assistant message's text as it is produced, piece by piece (a voice call speaks the first
   * words before the last are written); throws like `complete`, also midway through.
   */
  stream(messages: readonly ChatMessage[], options?: ChatOptions): AsyncIterable<string>;
}

/** Settings of the OpenAI-compatible adapter: all three or none (core/config.ts). */
export interface AiSettings {
  /** Base URL without trailing slash; requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Whole-request time limit in milliseconds. */
  timeoutMs: number;
}

/** Extracts the first JSON object of a model's reply (tolerating a code fence or prose around it). */
export function jsonObjectIn(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
