// Locks in the model port's streamed answer on its OpenAI-compatible adapter (providers/ai-chat.ts),
// against a local fake model server: the request asks for `stream: true` with the key and model, the
// pieces arrive in order as the server sends them (the first before the server has written the
// rest, even when an event is split across writes), and a failed status, a stream cut before
// `[DONE]` or an answer with no text is an error, never a silently short reply.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiChatModel } from '../../providers/ai-chat.ts';

type Script = (res: ServerResponse) => Promise<void> | void;

let script: Script = () => {};
let lastBody: Record<string, unknown> = {};
let lastAuth = '';
let url = '';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString('utf8');
  });
  req.on('end', () => {
    lastBody = JSON.parse(body) as Record<string, unknown>;
    lastAuth = req.headers.authorization ?? '';
    void script(res);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const model = () =>
  new OpenAiChatModel({ baseUrl: url, apiKey: 'sk-test', model: 'voice-1', timeoutMs: 5000 });
const event = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of iterable) pieces.push(piece);
  return pieces;
}

describe('a streamed answer from the model', () => {
  it('yields each piece as it arrives, the first before the rest is written', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    script = async (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`${event('Hello')}`);
      await released;
      // One event split across two writes, then the end.
      const second = event(', how can I help?');
      res.write(second.slice(0, 10));
      res.write(second.slice(10));
      res.end('data: [DONE]\n\n');
    };
    const pieces: string[] = [];
    for await (const piece of model().stream([{ role: 'user', content: 'Hi' }])) {
      pieces.push(piece);
      if (pieces.length === 1) release();
    }
    expect(pieces).toEqual(['Hello', ', how can I help?']);
    expect(lastBody).toMatchObject({
      model: 'voice-1',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(lastAuth).toBe('Bearer sk-test');
  });

  it('fails on an error status, a stream cut before [DONE], and an answer with no text', async () => {
    script = (res) => {
      res.writeHead(503).end('busy');
    };
    await expect(collect(model().stream([{ role: 'user', content: 'Hi' }]))).rejects.toThrow(/HTTP 503/);
    script = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(event('Half a sen'));
    };
    await expect(collect(model().stream([{ role: 'user', content: 'Hi' }]))).rejects.toThrow(
      /before \[DONE\]/,
    );
    script = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
    };
    await expect(collect(model().stream([{ role: 'user', content: 'Hi' }]))).rejects.toThrow(
      /no message content/,
    );
  });
});
