// Remembers verified credentials (PAT and OAuth token hashes, session principals) so a hot caller
// skips the token/user/organization join. Correctness comes first: anything that changes what
// authentication would answer calls invalidate() after its commit and before its response.
//
// - local mode (embedded default): entries live in this process, which is the only one that can
//   write the data; invalidate() drops matching entries synchronously.
// - redis mode (REDIS_URL): every entry carries the versions ("stamps") of its organization, user
//   and credential as stored in Redis when it was filled, and every hit re-reads them with one MGET.
//   invalidate() writes new versions before the writer answers, so the very next request on any
//   node sees the change; pub/sub only frees the other nodes' memory early.
// - notify mode (PostgreSQL without Redis): entries live in this process; database triggers send
//   every change that authentication reads on the channel AUTH_CHANNEL from inside the writer's
//   transaction (core/db/migrations/0030_auth_notify.sql), whoever the writer is, and a listener
//   connection of this process (core/db/notifications.ts) drops the matching entries when they
//   arrive. Hits are served only while that listener hears: on any doubt everything is dropped.
// - off: nothing is cached. No deployment chooses it since notify mode; it remains for measuring
//   the uncached path.
// docs/decisions.md ("Verified-credential cache") gives the argument in full.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { z } from 'zod';
import type { AuthContext } from '../auth-context.ts';
import type { Database } from '../db/client.ts';
import type { NotificationSource } from '../db/notifications.ts';
import type { Logger } from '../logger.ts';

export type CredentialCacheMode = 'off' | 'local' | 'redis' | 'notify';

/** The channel core/db/migrations/0030_auth_notify.sql's triggers send on (notify mode). */
export const AUTH_CHANNEL = 'crm_auth';

/** What a change touched; every entry of a listed organization, user or credential is dropped. */
export interface InvalidationTarget {
  orgIds?: readonly string[];
  userIds?: readonly string[];
  credentialIds?: readonly string[];
}

/** A verified credential as the loader returns it. */
export interface VerifiedCredential {
  auth: AuthContext;
  /** When the credential itself expires (OAuth tokens); a hit past it is re-verified (and refused). */
  expiresAt: Date | null;
}

export interface CredentialCacheOptions {
  mode: CredentialCacheMode;
  /** The command connection (required in redis mode); the subscriber is a duplicate of it. */
  redis?: Redis | null;
  /** The listener of AUTH_CHANNEL (required in notify mode); the cache starts and closes it. */
  notifications?: NotificationSource | null;
  logger: Logger;
  /** Upper bound on an entry's life, whatever happens; see the decisions entry. */
  ttlMs?: number;
  maxEntries?: number;
}

interface Entry {
  auth: AuthContext;
  credentialExpiresAt: number | null;
  until: number;
  /** Redis versions of [organization, user, credential] at fill time; null in the other modes. */
  stamps: (string | null)[] | null;
  /** A request is reloading this entry after its time to live; the others keep using it meanwhile. */
  reloading: boolean;
}

const INVALIDATION_CHANNEL = 'crm:auth:invalidate';
const FENCE_KEY = 'crm:auth:fence';
const VERSION_PREFIX = 'crm:auth:v:';
/** Versions outlive every entry stamped with them many times over, then expire to keep Redis tidy. */
const VERSION_TTL_MS = 24 * 60 * 60 * 1000;

/** A notify-mode message: `o:<id>`, `u:<id>` or `c:<id>`; null for anything else (`*`: truncated). */
function notifiedTarget(payload: string): InvalidationTarget | null {
  const id = payload.slice(2);
  if (payload[1] !== ':' || id === '') return null;
  if (payload[0] === 'o') return { orgIds: [id] };
  if (payload[0] === 'u') return { userIds: [id] };
  if (payload[0] === 'c') return { credentialIds: [id] };
  return null;
}

const invalidationMessage = z.object({
  orgIds: z.array(z.string()).optional(),
  userIds: z.array(z.string()).optional(),
  credentialIds: z.array(z.string()).optional(),
});

function versionKeys(auth: AuthContext): string[] {
  const keys = [`${VERSION_PREFIX}o:${auth.orgId}`, `${VERSION_PREFIX}u:${auth.userId}`];
  if (auth.credentialId) keys.push(`${VERSION_PREFIX}c:${auth.credentialId}`);
  return keys;
}

function targetKeys(target: InvalidationTarget): string[] {
  return [
    ...(target.orgIds ?? []).map((id) => `${VERSION_PREFIX}o:${id}`),
    ...(target.userIds ?? []).map((id) => `${VERSION_PREFIX}u:${id}`),
    ...(target.credentialIds ?? []).map((id) => `${VERSION_PREFIX}c:${id}`),
  ];
}

function matches(auth: AuthContext, target: InvalidationTarget): boolean {
  return (
    (target.orgIds?.includes(auth.orgId) ?? false) ||
    (target.userIds?.includes(auth.userId) ?? false) ||
    (auth.credentialId !== null && (target.credentialIds?.includes(auth.credentialId) ?? false))
  );
}

function sameStamps(a: readonly (string | null)[], b: readonly (string | null)[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

export class CredentialCache {
  readonly mode: CredentialCacheMode;
  /** Counters for tests and the benchmark: served from memory, and loaded from the database. */
  readonly stats = { hits: 0, misses: 0 };
  private readonly entries = new Map<string, Entry>();
  private readonly redis: Redis | null;
  private subscriber: Redis | null = null;
  private readonly notifications: NotificationSource | null;
  /** Notify mode: the listener hears every change, so entries may be served and stored. */
  private hearing = false;
  private readonly logger: Logger;
  private readonly ttlMs: number;
  private readonly graceMs: number;
  private readonly maxEntries: number;
  /** Bumped by every local invalidation; a fill that overlapped one is not stored. */
  private generation = 0;

  constructor(options: CredentialCacheOptions) {
    this.redis = options.redis ?? null;
    if (options.mode === 'redis' && !this.redis) throw new Error('redis mode needs a Redis connection');
    this.notifications = options.notifications ?? null;
    if (options.mode === 'notify' && !this.notifications) throw new Error('notify mode needs a listener');
    this.mode = options.mode;
    this.logger = options.logger;
    this.ttlMs = options.ttlMs ?? 5_000;
    this.graceMs = Math.min(1_000, this.ttlMs);
    this.maxEntries = options.maxEntries ?? 10_000;
    // Versions written while this node could not hear them may have been missed: forget everything.
    this.redis?.on('close', () => this.clear());
  }

  /**
   * Starts listening for other nodes' invalidations: redis mode subscribes without waiting; notify
   * mode waits (bounded by the listener) until it hears, so a node caches from its first requests.
   */
  async start(): Promise<void> {
    if (this.mode === 'notify' && this.notifications) {
      await this.notifications.start({
        message: (payload) => {
          const target = notifiedTarget(payload);
          // A truncation, or a message this version does not know: forgetting everything is safe.
          if (target) this.dropMatching(target);
          else this.clear();
        },
        // Changes made while the listener could not hear are unknown: forget everything, cache
        // nothing until it hears again, and then start from an empty cache (clear() also stops fills
        // that straddled the outage from being stored).
        ready: () => {
          this.clear();
          this.hearing = true;
        },
        lost: () => {
          this.hearing = false;
          this.clear();
        },
      });
      return;
    }
    if (this.mode !== 'redis' || !this.redis || this.subscriber) return;
    // A subscriber may queue its SUBSCRIBE until connected; the command connection never queues.
    const subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.subscriber = subscriber;
    subscriber.on('error', () => {});
    subscriber.on('close', () => this.clear());
    subscriber.on('message', (channel: string, text: string) => {
      if (channel !== INVALIDATION_CHANNEL) return;
      let parsed: z.infer<typeof invalidationMessage>;
      try {
        parsed = invalidationMessage.parse(JSON.parse(text));
      } catch {
        return;
      }
      this.dropMatching(parsed);
    });
    // Not awaited: with Redis down the subscription waits for the connection, and start-up must not.
    // Nothing depends on it for correctness (the versions do); ioredis re-subscribes after reconnects.
    subscriber.subscribe(INVALIDATION_CHANNEL).catch((err: unknown) => {
      this.logger.warn({ err }, 'credential cache: could not subscribe to invalidations');
    });
  }

  /**
   * The caller behind `key`: from memory when the entry is still current, otherwise from `load`
   * (which verifies against the database and throws for a bad credential; failures are not cached).
   */
  async lookup(key: string, now: Date, load: () => Promise<VerifiedCredential>): Promise<AuthContext> {
    if (this.mode === 'off') return (await load()).auth;
    if (this.mode === 'notify' && !this.hearing) {
      this.stats.misses++;
      return (await load()).auth;
    }
    const entry = this.entries.get(key);
    if (entry) {
      const t = now.getTime();
      const live =
        (entry.credentialExpiresAt === null || entry.credentialExpiresAt > t) &&
        (await this.stillCurrent(entry));
      if (live) {
        // Past its time to live, one request reloads the entry; the others keep using it (it is still
        // current: nothing invalidated it) for a short grace, instead of all hitting the database.
        if (entry.until > t || (entry.reloading && entry.until + this.graceMs > t)) {
          this.stats.hits++;
          return entry.auth;
        }
        if (!entry.reloading) return this.reload(key, entry, now, load);
      }
      if (this.entries.get(key) === entry) this.entries.delete(key);
    }
    this.stats.misses++;
    return this.fill(key, now, load);
  }

  /**
   * Drops everything `target` names, here at once and (redis mode) on every node by the time the
   * returned promise resolves. Call it after the change has committed and before answering. (In
   * notify mode the other nodes hear the change from the database's triggers instead.)
   */
  async invalidate(target: InvalidationTarget): Promise<void> {
    if (this.mode === 'off') return;
    this.dropMatching(target);
    if (this.mode !== 'redis' || !this.redis) return;
    const keys = targetKeys(target);
    if (keys.length === 0) return;
    const multi = this.redis.multi();
    for (const key of keys) multi.set(key, randomUUID(), 'PX', VERSION_TTL_MS);
    multi.incr(FENCE_KEY);
    multi.publish(INVALIDATION_CHANNEL, JSON.stringify(target));
    try {
      const results = await multi.exec();
      const failed = results?.find(([err]) => err !== null);
      if (!results || failed) throw failed?.[0] ?? new Error('transaction discarded');
    } catch (err) {
      // The change is committed; nodes that can reach Redis would keep a stale entry for at most ttlMs.
      this.logger.error({ err, target }, 'credential cache: could not publish an invalidation');
    }
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Notify mode: the server process id of the listening connection while connected (diagnostics, tests). */
  get listenerPid(): number | null {
    return this.notifications?.backendPid ?? null;
  }

  async close(): Promise<void> {
    this.clear();
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.hearing = false;
    await this.notifications?.close();
  }

  private async reload(
    key: string,
    entry: Entry,
    now: Date,
    load: () => Promise<VerifiedCredential>,
  ): Promise<AuthContext> {
    entry.reloading = true;
    this.stats.misses++;
    try {
      return await this.fill(key, now, load);
    } finally {
      // Not replaced (the load failed, or overlapped an invalidation): the next request starts afresh.
      if (this.entries.get(key) === entry) this.entries.delete(key);
    }
  }

  private dropMatching(target: InvalidationTarget): void {
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (matches(entry.auth, target)) this.entries.delete(key);
    }
  }

  private redisReady(): Redis | null {
    return this.redis?.status === 'ready' ? this.redis : null;
  }

  private async stillCurrent(entry: Entry): Promise<boolean> {
    if (this.mode === 'local') return true;
    if (this.mode === 'notify') return this.hearing;
    const redis = this.redisReady();
    if (!redis || !entry.stamps) return false;
    try {
      return sameStamps(await redis.mget(versionKeys(entry.auth)), entry.stamps);
    } catch {
      return false;
    }
  }

  /**
   * Loads and stores, unless an invalidation may have overlapped the load. The fence (local
   * generation, or the Redis fence counter) is read before the database and compared after: an
   * invalidation is written after its commit, so one that the database read could have missed has
   * either moved the fence already or will move the versions this entry is stamped with. In notify
   * mode a message is sent at its commit: one that arrived during the load moved the generation, one
   * still on its way drops the stored entry when it arrives.
   */
  private async fill(key: string, now: Date, load: () => Promise<VerifiedCredential>): Promise<AuthContext> {
    const generation = this.generation;
    const redis = this.mode === 'redis' ? this.redisReady() : null;
    let fence: string | null | undefined;
    if (redis) fence = await redis.get(FENCE_KEY).catch(() => undefined);
    const verified = await load();
    if (generation !== this.generation || (this.mode === 'notify' && !this.hearing)) return verified.auth;
    let stamps: (string | null)[] | null = null;
    if (this.mode === 'redis') {
      if (!redis || fence === undefined) return verified.auth;
      const read = await redis.mget(FENCE_KEY, ...versionKeys(verified.auth)).catch(() => null);
      if (!read || read[0] !== fence || generation !== this.generation) return verified.auth;
      stamps = read.slice(1);
    }
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, {
      auth: Object.freeze({ ...verified.auth }),
      credentialExpiresAt: verified.expiresAt?.getTime() ?? null,
      until: now.getTime() + this.ttlMs,
      stamps,
      reloading: false,
    });
    return verified.auth;
  }
}

// core/admin.ts works on a Database (the admin API and `crm admin` share it) rather than on
// Services; it finds the cache of the services that opened that database here.
const cachesByDatabase = new WeakMap<Database, CredentialCache>();

export function bindCredentialCache(db: Database, cache: CredentialCache): void {
  cachesByDatabase.set(db, cache);
}

/** Invalidates through the cache bound to `db`, if any (a process without one caches nothing). */
export async function invalidateCredentials(db: Database, target: InvalidationTarget): Promise<void> {
  await cachesByDatabase.get(db)?.invalidate(target);
}

/**
 * For a process without Services that changes credentials (the `crm admin` commands): binds a
 * Redis-publishing cache to `db`, so core/admin.ts invalidations reach the API nodes. Returns the
 * function that closes the connection.
 */
export function connectInvalidationPublisher(db: Database, redisUrl: string, logger: Logger): () => void {
  // A command-line process may wait for the connection, so this one keeps the offline queue.
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  bindCredentialCache(db, new CredentialCache({ mode: 'redis', redis, logger }));
  return () => redis.disconnect();
}
