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

export class OpenAiChatModel implements ChatModel {
  readonly model: string;
  private readonly settings: AiSettings;

  constructor(settings: AiSettings) {
    this.settings = settings;
    this.model = settings.model;
  }

  async complete(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<string> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const res = await request(`${this.settings.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.settings.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({
        model: this.settings.model,
        messages,
        temperature: 0.2,
        ...(options.json ? { response_format: { type: 'json_object' } } : {}),
      }),
      signal,
    });
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
