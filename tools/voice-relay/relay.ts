// The voice relay: the WebSocket Twilio's ConversationRelay opens for a call a voice agent answers
// (`/voice/relay/:agentId`, core/sockets.ts). The handshake is checked like a provider hook: the
// agent's organization is found without a tenant, and `X-Twilio-Signature` must be that
// organization's signature of the wss URL (PUBLIC_BASE_URL's host, the path and query, no
// parameters). Then Twilio sends JSON messages (setup first, then prompts, interrupts, digits,
// errors) and the agent answers `text` tokens streamed from the model as it writes them, or the
// rules answer without a model; `end` hands the call to a person. Every turn is appended to the
// call's session row as it happens.
import { z } from 'zod';
import type { ChatMessage } from '../../core/ai.ts';
import { OBJECT_ID_PATTERN } from '../../core/ids.ts';
import type { Services } from '../../core/services.ts';
import type {
  SocketAnswer,
  SocketConnection,
  SocketHandlers,
  SocketRequest,
  SocketRoute,
} from '../../core/sockets.ts';
import { type AiContextArticle, aiContextArticles } from '../knowledge-base/lookups.ts';
import { telephonyCredentialsOf } from '../telephony/lookups.ts';
import { isValidTwilioSignature } from '../telephony/signature.ts';
import { type VoiceAgentFacts, voiceAgentForRelay } from '../voice-agents/lookups.ts';
import { asksForPerson, HANDOFF_MARKER, rulesAnswer, systemMessage } from './answer.ts';
import { voiceRelaySettings } from './settings.ts';
import { appendTurns, closeSession, markHandoff, openSession, type TranscriptTurn } from './store.ts';

const RELAY_PATH = '/voice/relay/:agentId';

const text = (max: number) => z.string().max(max);

/** The messages ConversationRelay sends (unknown fields are kept out, unknown types ignored). */
const inbound = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('setup'),
    sessionId: text(200),
    accountSid: text(100),
    callSid: text(100),
    from: text(100).optional(),
    to: text(100).optional(),
    direction: text(50).optional(),
    customParameters: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    type: z.literal('prompt'),
    voicePrompt: text(10_000),
    lang: text(35).optional(),
    last: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('interrupt'),
    utteranceUntilInterrupt: text(10_000).optional(),
    durationUntilInterruptMs: z.number().optional(),
  }),
  z.object({ type: z.literal('dtmf'), digit: text(10) }),
  z.object({ type: z.literal('error'), description: text(2_000).optional() }),
]);
type Inbound = z.infer<typeof inbound>;

/** The wss URL Twilio signed: PUBLIC_BASE_URL's host with the wss scheme, then the path and query. */
function relayUrl(services: Pick<Services, 'config'>, pathWithQuery: string): string {
  return `wss://${new URL(services.config.publicBaseUrl).host}${pathWithQuery}`;
}

async function open(request: SocketRequest, services: Services): Promise<SocketAnswer> {
  const agentId = request.params.agentId ?? '';
  if (!OBJECT_ID_PATTERN.test(agentId)) return { refuse: 404, reason: 'Voice agent not found' };
  const found = await voiceAgentForRelay(services.db.system, agentId);
  if (found?.facts.status !== 'active') return { refuse: 404, reason: 'Voice agent not found' };
  const { orgId, facts } = found;
  const credentials = await services.db.withTenant(orgId, (tx) =>
    telephonyCredentialsOf(tx, services, orgId),
  );
  if (!credentials) return { refuse: 403, reason: 'Telephony is not configured' };
  const url = relayUrl(services, request.pathWithQuery);
  if (!isValidTwilioSignature(credentials.authToken, url, {}, request.headers['x-twilio-signature']))
    return { refuse: 403, reason: 'Invalid signature' };
  const maxTurns = voiceRelaySettings.of(services.config).VOICE_RELAY_MAX_TURNS;
  return {
    accept: (connection) =>
      new RelayCall(services, connection, {
        orgId,
        agent: facts,
        accountSid: credentials.accountSid,
        maxTurns,
        requestId: request.requestId,
      }).handlers(),
  };
}

interface CallSettings {
  orgId: string;
  agent: VoiceAgentFacts;
  accountSid: string;
  maxTurns: number;
  requestId: string;
}

/** One call on the relay: its state between messages. */
class RelayCall {
  private sessionRowId: string | null = null;
  private readonly history: ChatMessage[] = [];
  private articles: AiContextArticle[] = [];
  private prompts = 0;
  private ended = false;
  /** The answer being streamed, and how to stop it. */
  private answering: { done: Promise<void>; abort: AbortController } | null = null;
  /** Transcript writes, one after the other, so turns keep their order. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: Services,
    private readonly connection: SocketConnection,
    private readonly call: CallSettings,
  ) {}

  handlers(): SocketHandlers {
    return {
      message: (raw) => this.message(raw),
      closed: (code) => {
        void this.closed(code);
      },
    };
  }

  private log(level: 'info' | 'warn' | 'error', details: Record<string, unknown>, message: string): void {
    this.services.logger[level](
      { ...details, socket: RELAY_PATH, request_id: this.call.requestId, agent_id: this.call.agent.id },
      message,
    );
  }

  private async message(raw: string): Promise<void> {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      this.log('warn', {}, 'voice relay: ignored a frame that is not JSON');
      return;
    }
    const parsed = inbound.safeParse(json);
    if (!parsed.success) {
      const type = typeof json === 'object' && json !== null && 'type' in json ? String(json.type) : null;
      this.log(
        'warn',
        { type, issues: parsed.error.issues.slice(0, 3) },
        'voice relay: ignored an unknown or invalid message',
      );
      return;
    }
    const msg = parsed.data;
    if (msg.type === 'setup') return this.setup(msg);
    if (this.sessionRowId === null) {
      this.log('warn', { type: msg.type }, 'voice relay: ignored a message before setup');
      return;
    }
    if (this.ended) return;
    switch (msg.type) {
      case 'prompt':
        return this.prompt(msg);
      case 'interrupt':
        return this.interrupt(msg);
      case 'dtmf':
        this.record([{ kind: 'dtmf', text: msg.digit, at: now() }]);
        return;
      case 'error':
        this.log('warn', { description: msg.description }, 'voice relay: the provider reported an error');
        this.record([{ kind: 'error', text: msg.description ?? '', at: now() }]);
        return;
    }
  }

  private async setup(msg: Extract<Inbound, { type: 'setup' }>): Promise<void> {
    if (this.sessionRowId !== null) {
      this.log('warn', {}, 'voice relay: ignored a second setup');
      return;
    }
    if (msg.accountSid !== this.call.accountSid) {
      this.log('warn', {}, "voice relay: setup named another account than the agent's organization");
      this.connection.close(1008, 'account mismatch');
      return;
    }
    const { orgId, agent } = this.call;
    this.sessionRowId = await this.services.db.withTenant(orgId, async (tx) => {
      this.articles = agent.useKnowledgeBase
        ? await aiContextArticles(tx, orgId, { locale: agent.language, limit: 50 })
        : [];
      return openSession(tx, {
        orgId,
        agentId: agent.id,
        callSid: msg.callSid,
        sessionId: msg.sessionId,
        from: msg.from ?? null,
        to: msg.to ?? null,
        direction: msg.direction ?? null,
        startedAt: new Date(),
      });
    });
    this.history.push({ role: 'assistant', content: agent.greeting });
  }

  private async prompt(msg: Extract<Inbound, { type: 'prompt' }>): Promise<void> {
    // Partial transcriptions (last: false) are not acted on; the final one carries the whole prompt.
    if (msg.last === false) return;
    await this.stopAnswering();
    this.prompts++;
    const turn: TranscriptTurn = { kind: 'caller', text: msg.voicePrompt, at: now() };
    if (msg.lang) turn.lang = msg.lang;
    this.record([turn]);
    this.history.push({ role: 'user', content: msg.voicePrompt });
    if (asksForPerson(msg.voicePrompt)) return this.handoff('caller asked for a person');
    if (this.prompts > this.call.maxTurns) return this.handoff('maximum turns reached');
    const abort = new AbortController();
    // Not awaited: the relay must read the next message (an interrupt) while the answer streams.
    const done = this.answer(abort.signal).catch((err: unknown) =>
      this.log('error', { err }, 'voice relay: answering failed'),
    );
    this.answering = { done, abort };
  }

  private async answer(signal: AbortSignal): Promise<void> {
    const ai = this.services.ai;
    if (!ai) return this.rulesTurn();
    const messages: ChatMessage[] = [
      { role: 'system', content: systemMessage(this.call.agent, this.articles) },
      ...this.history,
    ];
    const model = { source: 'model', model: ai.model } as const;
    let said = '';
    // The first characters are held until they cannot be the handoff marker.
    let held = '';
    let speaking = false;
    try {
      for await (const piece of ai.stream(messages, { signal })) {
        if (signal.aborted) break;
        if (speaking) {
          said += piece;
          this.sendText(piece, false);
          continue;
        }
        held += piece;
        const start = held.trimStart();
        if (start.startsWith(HANDOFF_MARKER)) break;
        if (HANDOFF_MARKER.startsWith(start)) continue;
        speaking = true;
        said = held;
        this.sendText(held, false);
      }
    } catch (err) {
      if (signal.aborted) return this.agentSaid(said, model, true);
      this.log('warn', { err }, 'voice relay: the model failed; answering by the rules');
      if (said === '') return this.rulesTurn();
      this.sendText('', true);
      return this.agentSaid(said, model, false);
    }
    if (signal.aborted) return this.agentSaid(said, model, true);
    if (!speaking && held.trimStart().startsWith(HANDOFF_MARKER))
      return this.handoff('the agent handed the call over');
    if (!speaking) {
      said = held;
      this.sendText(held, false);
    }
    this.sendText('', true);
    return this.agentSaid(said, model, false);
  }

  private rulesTurn(): void {
    const last = this.history.findLast((m) => m.role === 'user')?.content ?? '';
    const reply = rulesAnswer(this.call.agent, last, this.articles);
    this.sendText(reply, true);
    this.agentSaid(reply, { source: 'rules' }, false);
  }

  private agentSaid(
    said: string,
    provenance: { source: 'model' | 'rules'; model?: string },
    interrupted: boolean,
  ): void {
    if (said === '') return;
    this.history.push({ role: 'assistant', content: said });
    const turn: TranscriptTurn = { kind: 'agent', text: said, at: now(), source: provenance.source };
    if (provenance.model) turn.model = provenance.model;
    if (interrupted) turn.interrupted = true;
    this.record([turn]);
  }

  private sendText(token: string, last: boolean): void {
    this.connection.send(JSON.stringify({ type: 'text', token, last }));
  }

  /** Stops the answer being streamed (if any) and waits for its turn to be recorded. */
  private async stopAnswering(): Promise<void> {
    const current = this.answering;
    if (!current) return;
    current.abort.abort();
    await current.done;
    this.answering = null;
  }

  private async interrupt(msg: Extract<Inbound, { type: 'interrupt' }>): Promise<void> {
    await this.stopAnswering();
    const heard = msg.utteranceUntilInterrupt ?? '';
    // What the caller heard replaces the whole answer in the conversation the model sees.
    const lastMessage = this.history.at(-1);
    if (lastMessage?.role === 'assistant' && heard !== '') lastMessage.content = heard;
    this.record([{ kind: 'interrupt', text: heard, at: now() }]);
  }

  private async handoff(reason: string): Promise<void> {
    const { orgId } = this.call;
    const sessionId = this.sessionRowId;
    this.ended = true;
    this.connection.send(
      JSON.stringify({ type: 'end', handoffData: JSON.stringify({ reason, to: 'human' }) }),
    );
    this.record([{ kind: 'end', text: `handoff: ${reason}`, at: now() }]);
    if (sessionId) {
      this.writes = this.writes
        .then(() => this.services.db.withTenant(orgId, (tx) => markHandoff(tx, orgId, sessionId, reason)))
        .catch((err: unknown) => this.log('error', { err }, 'voice relay: recording the handoff failed'));
      await this.writes;
    }
  }

  /** Appends turns to the session row after the writes before them (crash-safe: one turn at a time). */
  private record(turns: TranscriptTurn[]): void {
    const id = this.sessionRowId;
    if (!id) return;
    const { orgId } = this.call;
    this.writes = this.writes
      .then(() => this.services.db.withTenant(orgId, (tx) => appendTurns(tx, orgId, id, turns)))
      .catch((err: unknown) => this.log('error', { err }, 'voice relay: a transcript write failed'));
  }

  private async closed(code: number): Promise<void> {
    try {
      await this.stopAnswering();
      const id = this.sessionRowId;
      if (!id) return;
      if (!this.ended) this.record([{ kind: 'end', text: `socket closed (${code})`, at: now() }]);
      await this.writes;
      const { orgId } = this.call;
      await this.services.db.withTenant(orgId, (tx) => closeSession(tx, orgId, id, new Date()));
    } catch (err) {
      this.log('error', { err }, 'voice relay: closing the session failed');
    }
  }
}

function now(): string {
  return new Date().toISOString();
}

export const relayRoute: SocketRoute = { path: RELAY_PATH, open };
