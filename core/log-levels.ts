// The log level a client asked for, kept per credential (an API key or OAuth token, or the user for
// a session) where every API node and every later request sees it. The MCP endpoint of the 2025
// revisions is stateless (a fresh server per HTTP request), so a `logging/setLevel` must outlive the
// request that sent it: in Redis when REDIS_URL is set, in this process otherwise (the embedded
// default is one process). app/services.ts chooses the adapter; mcp/logging.ts uses the port.
// docs/mcp.md "Logging", docs/decisions.md "MCP logging on the 2025 revisions".
import type { Redis } from 'ioredis';
import type { Logger } from './logger.ts';

/** The levels of RFC 5424 as MCP names them, least severe first. */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Whether a message of `level` passes the threshold `min` (at or above it). */
export function atLeast(level: LogLevel, min: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
}

/** A level lives this long after it was last set: a client that comes back the next day sets it again. */
export const LOG_LEVEL_TTL_MS = 24 * 60 * 60 * 1000;

/** The port: the level set for a credential key, or null when none is set (or it expired). */
export interface LogLevelStore {
  get(key: string): Promise<LogLevel | null>;
  /** Sets the level and restarts its time to live. */
  set(key: string, level: LogLevel): Promise<void>;
}

/** One process's levels: the embedded default, and the Redis adapter's fallback while Redis is down. */
export class MemoryLogLevelStore implements LogLevelStore {
  private readonly levels = new Map<string, { level: LogLevel; until: number }>();

  constructor(
    private readonly ttlMs = LOG_LEVEL_TTL_MS,
    private readonly maxEntries = 10_000,
  ) {}

  async get(key: string): Promise<LogLevel | null> {
    const entry = this.levels.get(key);
    if (!entry) return null;
    if (entry.until <= Date.now()) {
      this.levels.delete(key);
      return null;
    }
    return entry.level;
  }

  async set(key: string, level: LogLevel): Promise<void> {
    // Re-inserted at the end, so the oldest-set entry is the first to go when the map is full.
    this.levels.delete(key);
    if (this.levels.size >= this.maxEntries) {
      const oldest = this.levels.keys().next();
      if (!oldest.done) this.levels.delete(oldest.value);
    }
    this.levels.set(key, { level, until: Date.now() + this.ttlMs });
  }
}

const KEY_PREFIX = 'crm:log-level:';

/**
 * The levels in Redis, shared by every node. Like the rate limits, it degrades rather than fails
 * while Redis cannot be reached: each node then answers from its own memory (where every set is
 * also written), so a level set through this node still holds here; Redis wins again once reachable.
 */
export class RedisLogLevelStore implements LogLevelStore {
  private readonly fallback: MemoryLogLevelStore;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly ttlMs = LOG_LEVEL_TTL_MS,
  ) {
    this.fallback = new MemoryLogLevelStore(ttlMs);
  }

  async get(key: string): Promise<LogLevel | null> {
    let stored: string | null;
    try {
      stored = await this.redis.get(KEY_PREFIX + key);
    } catch (err) {
      this.logger.warn({ err }, 'log levels: Redis unreachable, reading this node’s memory');
      return this.fallback.get(key);
    }
    // Anything else under the key (written by hand, or by a later version) counts as unset.
    return isLogLevel(stored) ? stored : null;
  }

  async set(key: string, level: LogLevel): Promise<void> {
    await this.fallback.set(key, level);
    try {
      await this.redis.set(KEY_PREFIX + key, level, 'PX', this.ttlMs);
    } catch (err) {
      this.logger.warn({ err }, 'log levels: Redis unreachable, the level holds on this node only');
    }
  }
}
