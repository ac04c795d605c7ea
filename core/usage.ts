// Keeps `last_used_at` of API keys and OAuth tokens current without a database write per request:
// uses are remembered in memory and written in one batch every `flushIntervalMs` (and at shutdown).
// Readers merge the pending values, so a key's own listing is never behind.
import { inArray, sql } from 'drizzle-orm';
import type { Executor } from './db/client.ts';
import { apiKeys, oauthTokens } from './db/schema.ts';

type Kind = 'pat' | 'oauth';

export class CredentialUsage {
  private pending = new Map<string, { kind: Kind; at: Date }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Executor,
    private readonly flushIntervalMs = 30_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush().catch(() => {}), this.flushIntervalMs);
    this.timer.unref();
  }

  record(kind: Kind, id: string, at: Date): void {
    this.pending.set(id, { kind, at });
  }

  /** The newest use not yet written, if any. */
  pendingFor(id: string): Date | undefined {
    return this.pending.get(id)?.at;
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    for (const [kind, table] of [
      ['pat', apiKeys],
      ['oauth', oauthTokens],
    ] as const) {
      const entries = [...batch].filter(([, v]) => v.kind === kind);
      if (entries.length === 0) continue;
      // One UPDATE per kind; greatest() keeps the newest time if another node wrote a later one.
      for (const [id, { at }] of entries) {
        await this.db
          .update(table)
          .set({ lastUsedAt: sql`greatest(coalesce(${table.lastUsedAt}, ${at}), ${at})` })
          .where(inArray(table.id, [id]));
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
