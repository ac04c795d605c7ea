// One PostgreSQL channel heard on a connection of its own, outside the pool, by a process that must
// know whenever it may be missing messages (core/auth/cache.ts notify mode). A pooled connection
// cannot LISTEN: it is lent to another query between two, and a PgBouncer in transaction mode
// forgets the LISTEN with the transaction. So the listener is a `pg.Client` on a URL that reaches
// PostgreSQL directly (DATABASE_DIRECT_URL), reconnected with backoff whenever it ends.
//
// "Connected and LISTENed" is not proof enough: a listener behind a transaction-mode pooler, or on
// a connection that died without a reset, hears nothing and raises no error. So the source calls
// itself ready only once a probe sent through the pool, the way writers send (`send`), has come back
// on the listening connection, and it probes again every few seconds; a probe that does not come
// back in time counts as a lost connection.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logger.ts';

export interface NotificationHandlers {
  /** A message on the channel (probes excepted). */
  message(payload: string): void;
  /** Listening, and a probe came back: from now on every committed message is heard. */
  ready(): void;
  /** The connection ended or stopped hearing: messages may be missed until the next ready(). */
  lost(): void;
}

export interface NotificationSource {
  /** Starts listening; resolves once ready or after its start-up wait, whichever is first; never rejects. */
  start(handlers: NotificationHandlers): Promise<void>;
  /** The listening connection's server process id while connected (operators' diagnostics, tests). */
  readonly backendPid: number | null;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Reaches PostgreSQL directly, not through a transaction-mode pooler. */
  url: string;
  channel: string;
  /** Sends `payload` on `channel` as writers do: through the pool, in a transaction of its own. */
  send(channel: string, payload: string): Promise<void>;
  logger: Logger;
  /** How often a ready listener checks that it still hears (ms). */
  probeEveryMs?: number;
  /** How long a probe may take, the pool's wait included, before the listener counts as lost (ms). */
  probeTimeoutMs?: number;
  /** Reconnection delays: doubled after each failure from the first up to the second (ms). */
  retryMs?: { min: number; max: number };
  /** How long start() waits for the first ready (ms); the listener keeps trying after it. */
  startWaitMs?: number;
}

/** Probe payloads: no trigger sends this prefix, so a probe is never mistaken for a change. */
const PROBE_PREFIX = 'probe:';

function delay(ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return timer;
}

class PgNotificationSource implements NotificationSource {
  private client: pg.Client | null = null;
  private pid: number | null = null;
  private handlers: NotificationHandlers | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private nextRetryMs: number;
  /** An outage is logged at its first failure; the retries that follow are quiet. */
  private warned = false;
  private readonly probes = new Map<string, () => void>();
  private readonly readyWaiters: (() => void)[] = [];
  private readonly probeEveryMs: number;
  private readonly probeTimeoutMs: number;
  private readonly retryMs: { min: number; max: number };
  private readonly startWaitMs: number;

  constructor(private readonly options: ListenOptions) {
    this.probeEveryMs = options.probeEveryMs ?? 5_000;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
    this.retryMs = options.retryMs ?? { min: 100, max: 5_000 };
    this.startWaitMs = options.startWaitMs ?? 2_000;
    this.nextRetryMs = this.retryMs.min;
  }

  get backendPid(): number | null {
    return this.pid;
  }

  async start(handlers: NotificationHandlers): Promise<void> {
    if (this.handlers) return;
    this.handlers = handlers;
    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<void>((resolve) => {
      this.readyWaiters.push(resolve);
      // Not unref'd: while the server starts, this wait may be all that keeps the process running.
      timer = setTimeout(resolve, this.startWaitMs);
    });
    void this.connect();
    await ready;
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    if (client) this.drop(client);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private async connect(): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      keepAlive: true,
      connectionTimeoutMillis: this.probeTimeoutMs,
      application_name: 'crm credential cache listener',
    });
    this.client = client;
    client.on('error', (err) => this.drop(client, err));
    client.on('end', () => this.drop(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === this.options.channel) this.receive(message.payload ?? '');
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      this.pid = rows[0]?.pid ?? null;
      await client.query(`LISTEN ${client.escapeIdentifier(this.options.channel)}`);
      await this.probe();
    } catch (err) {
      this.drop(client, err);
      return;
    }
    if (this.client !== client) return;
    this.nextRetryMs = this.retryMs.min;
    if (this.warned) this.options.logger.info('credential cache listener: listening again');
    this.warned = false;
    this.handlers?.ready();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
    this.timer = delay(this.probeEveryMs, () => void this.heartbeat(client));
  }

  private async heartbeat(client: pg.Client): Promise<void> {
    if (this.client !== client) return;
    try {
      await this.probe();
    } catch (err) {
      this.drop(client, err);
      return;
    }
    if (this.client === client) this.timer = delay(this.probeEveryMs, () => void this.heartbeat(client));
  }

  /** Sends a fresh payload through the pool and waits for it on the listening connection. */
  private async probe(): Promise<void> {
    const payload = `${PROBE_PREFIX}${randomUUID()}`;
    let timer: NodeJS.Timeout | undefined;
    const echoed = new Promise<void>((resolve, reject) => {
      this.probes.set(payload, resolve);
      timer = delay(this.probeTimeoutMs, () => reject(new Error('the probe did not come back in time')));
    });
    try {
      await Promise.all([this.options.send(this.options.channel, payload), echoed]);
    } finally {
      clearTimeout(timer);
      this.probes.delete(payload);
    }
  }

  private receive(payload: string): void {
    if (payload.startsWith(PROBE_PREFIX)) {
      // Another process's probes arrive too; only this one's own are awaited.
      this.probes.get(payload)?.();
      return;
    }
    this.handlers?.message(payload);
  }

  /** Forgets `client` (once), tells the handlers, and schedules the next connection. */
  private drop(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.pid = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    client.removeAllListeners('notification');
    void client.end().catch(() => {});
    this.handlers?.lost();
    if (this.closed) return;
    if (!this.warned) {
      this.options.logger.warn(
        { err, retryInMs: this.nextRetryMs },
        'credential cache listener: not listening; nothing is cached until it is back',
      );
      this.warned = true;
    }
    this.timer = delay(this.nextRetryMs, () => void this.connect());
    this.nextRetryMs = Math.min(this.nextRetryMs * 2, this.retryMs.max);
  }
}

/** A listener on `channel` (not started: `start` connects). */
export function listenForNotifications(options: ListenOptions): NotificationSource {
  return new PgNotificationSource(options);
}
