// What the voice relay's tests share: a local fake model server streaming server-sent events (as
// test/ports/ai-stream.test.ts), the app served on a port with its WebSockets (as
// test/sockets.test.ts), a `test` whose context reaches a Twilio peer and, optionally, the fake
// model, and a WebSocket client playing Twilio's ConversationRelay with a signed handshake.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { attachPublicSockets } from '../../rest/public-sockets.ts';
import { createTestContext, type TestContext, type TestOrg } from '../fixtures/context.ts';
import { readOutput, TOOL } from '../fixtures/index.ts';
import { twilioSignature } from '../support/twilio-peer.ts';
import { telephonyTest } from '../telephony/kit.ts';
import { AGENT_BODY } from '../voice-agents/kit.ts';

export type Script = (res: ServerResponse, req: IncomingMessage) => Promise<void> | void;

export interface FakeModel {
  url: string;
  /** Every request body received, in order. */
  bodies: Array<{ messages: Array<{ role: string; content: string }> } & Record<string, unknown>>;
  /** How the next requests are answered (default: `answer` streamed in pieces). */
  script: Script;
  close(): Promise<void>;
}

export const sse = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

/** Streams `pieces` then [DONE]. */
export const streams =
  (...pieces: string[]): Script =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) res.write(sse(piece));
    res.end('data: [DONE]\n\n');
  };

export async function startFakeModel(): Promise<FakeModel> {
  const model: FakeModel = {
    url: '',
    bodies: [],
    script: streams('We open', ' at nine.'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      model.bodies.push(JSON.parse(body));
      void model.script(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return model;
}

export interface Harness {
  /** ws://127.0.0.1:port */
  url: string;
  close(): Promise<void>;
}

/** The app on a port with the areas' WebSockets (the production SOCKET_ROUTES). */
export async function serveRelay(t: TestContext): Promise<Harness> {
  const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const sockets = attachPublicSockets(server, t.services);
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    async close() {
      await sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A `test` with `peer` (telephonyTest), `harness` (the served app) and, with `model: true`, `model`
 * (the fake model server the context's AI_BASE_URL names); `env` adds to the context's configuration.
 */
export function relayTest(setup: { model: boolean; env?: Record<string, string> }) {
  const test = telephonyTest({ options: { withoutRateLimits: true } })
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the model has none.
    .extend('model', { scope: 'file' }, async ({}, { onCleanup }) => {
      if (!setup.model) return null;
      const model = await startFakeModel();
      onCleanup(() => model.close());
      return model;
    });
  test.override('t', { scope: 'file' }, async ({ peer, model }, { onCleanup }) => {
    const env: Record<string, string> = { ...setup.env, TWILIO_API_BASE_URL: peer.url };
    if (model) Object.assign(env, { AI_BASE_URL: model.url, AI_API_KEY: 'sk-test', AI_MODEL: 'voice-1' });
    const t = await createTestContext(env, { withoutRateLimits: true });
    onCleanup(() => t.close());
    return t;
  });
  return test.extend('harness', { scope: 'file' }, async ({ t }, { onCleanup }) => {
    const harness = await serveRelay(t);
    onCleanup(() => harness.close());
    return harness;
  });
}

/** Creates a voice agent through the API and returns its id. */
export async function createAgent(
  t: TestContext,
  org: TestOrg,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.request('POST', '/api/v1/voice-agents', {
    token: org.token,
    body: { ...AGENT_BODY, ...body },
  });
  return (await readOutput(res, TOOL.create_voice_agent, 201)).voice_agent._id;
}

/** The path of an agent's relay, and the signature Twilio would send for it with `authToken`. */
export function signedPath(t: TestContext, agentId: string, authToken: string, query = '') {
  const path = `/voice/relay/${agentId}${query}`;
  const host = new URL(t.config.publicBaseUrl).host;
  return { path, signature: twilioSignature(authToken, `wss://${host}${path}`, {}) };
}

/** The status an upgrade is refused with, or "open". */
export function handshake(url: string, headers: Record<string, string> = {}): Promise<number | 'open'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    ws.on('error', reject);
  });
}

export interface Frame {
  type: string;
  token?: string;
  last?: boolean;
  handoffData?: string;
}

export interface RelayClient {
  ws: WebSocket;
  frames: Frame[];
  closed: Promise<number>;
  send(message: Record<string, unknown>): void;
  /** Waits until a frame matching `check` has arrived (bounded by polls, not by time). */
  until(check: (frames: Frame[]) => boolean): Promise<void>;
}

/** Opens the relay as Twilio does (signed), ready for `setup`. */
export function connectRelay(url: string, signature: string): Promise<RelayClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature } });
    const frames: Frame[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        closed,
        send: (message) => ws.send(JSON.stringify(message)),
        async until(check) {
          for (let i = 0; i < 500 && !check(frames); i++) await new Promise((r) => setTimeout(r, 10));
          expect(check(frames), JSON.stringify(frames)).toBe(true);
        },
      }),
    );
    ws.on('error', reject);
  });
}

/** Polls `read` until `check` holds (bounded), then returns the last value. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 500 && !check(value); i++) {
    await new Promise((r) => setTimeout(r, 10));
    value = await read();
  }
  expect(check(value), JSON.stringify(value)).toBe(true);
  return value;
}

/** A ConversationRelay `setup` message for the peer's account. */
export function setupMessage(accountSid: string, callSid: string) {
  return {
    type: 'setup',
    sessionId: `VX${callSid.slice(2)}`,
    accountSid,
    callSid,
    from: '+15550001111',
    to: '+15550002222',
    direction: 'inbound',
    customParameters: {},
  };
}

/** Publishes an AI-context article in `org`'s knowledge base. */
export async function publishArticle(
  t: TestContext,
  org: TestOrg,
  title: string,
  bodyHtml: string,
  locale = 'en',
): Promise<void> {
  const res = await t.request('POST', '/api/v1/knowledge-base', {
    token: org.token,
    body: { title, body_html: bodyHtml, status: 'published', is_ai_context: true, locale },
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** Reads a call's session through the API (the first of the list for that call). */
export async function sessionOf(t: TestContext, org: TestOrg, callSid: string) {
  const res = await t.request('GET', `/api/v1/voice-sessions?call_sid=${callSid}`, { token: org.token });
  return (await readOutput(res, TOOL.list_voice_sessions)).voice_sessions[0];
}

let calls = 0;
/** A fresh call SID. */
export function newCallSid(): string {
  calls++;
  return `CA${String(calls).padStart(4, '0')}${'c'.repeat(28)}`;
}
