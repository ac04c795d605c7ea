// The production ChatModel (core/ai.ts): an OpenAI-compatible `POST {AI_BASE_URL}/chat/completions`
// over undici with `Authorization: Bearer AI_API_KEY`, model AI_MODEL, a whole-request timeout and a
// bounded answer. The key never appears in an error message or a log line.
import { request } from 'undici';
import { z } from 'zod';
import type { AiSettings, ChatMessage, ChatModel, ChatOptions } from '../core/ai.ts';

/** A model's answer larger than this is not a list of questions: refused without reading on. */
const MAX_ANSWER_BYTES = 256 * 1024;

const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
});

/** One server-sent chunk of a streamed completion: `choices[0].delta.content`. */
const chunkSchema = z.object({
  choices: z.array(z.object({ delta: z.object({ content: z.string().nullable().optional() }).optional() })),
});

export class OpenAiChatModel implements ChatModel {
  readonly model: string;
  private readonly settings: AiSettings;

  constructor(settings: AiSettings) {
    this.settings = settings;
    this.model = settings.model;
  }

  /** POSTs the chat; `stream` asks for server-sent chunks. */
  private post(messages: readonly ChatMessage[], options: ChatOptions, stream: boolean) {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    return request(`${this.settings.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.settings.apiKey}`,
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify({
        model: this.settings.model,
        messages,
        temperature: 0.2,
        ...(stream ? { stream: true } : {}),
        ...(options.json ? { response_format: { type: 'json_object' } } : {}),
      }),
      signal,
    });
  }

  async *stream(messages: readonly ChatMessage[], options: ChatOptions = {}): AsyncIterable<string> {
    const res = await this.post(messages, options, true);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump().catch(() => undefined);
      throw new Error(`the model endpoint answered HTTP ${res.statusCode}`);
    }
    // Server-sent events: `data: {json}` lines, each a chunk of the message, then `data: [DONE]`.
    let pending = '';
    let size = 0;
    let produced = false;
    for await (const chunk of res.body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      // Leaving the loop by a throw ends the body's iterator, which releases the connection.
      if (size > MAX_ANSWER_BYTES) {
        throw new Error(`the model answer exceeds ${MAX_ANSWER_BYTES} bytes`);
      }
      pending += buf.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const data = line.startsWith('data:') ? line.slice(5).trim() : '';
        if (data === '') continue;
        if (data === '[DONE]') {
          if (!produced) throw new Error('the model endpoint answered no message content');
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          throw new Error('the model endpoint streamed something other than JSON');
        }
        const piece = chunkSchema.safeParse(parsed);
        const text = piece.success ? piece.data.choices[0]?.delta?.content : undefined;
        if (text) {
          produced = true;
          yield text;
        }
      }
    }
    throw new Error('the model stream ended before [DONE]');
  }

  async complete(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<string> {
    const res = await this.post(messages, options, false);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      if (size > MAX_ANSWER_BYTES) {
        res.body.destroy();
        throw new Error(`the model answer exceeds ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(buf);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new Error(`the model endpoint answered HTTP ${res.statusCode}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new Error('the model endpoint answered something other than JSON');
    }
    const parsed = completionSchema.safeParse(body);
    const content = parsed.success ? parsed.data.choices[0]?.message.content : undefined;
    if (!content) throw new Error('the model endpoint answered no message content');
    return content;
  }
}
