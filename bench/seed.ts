// Seeds the benchmark's organization: an owner, N leads written in batched multi-row inserts
// (one round trip per batch, not per lead) and a PAT that can list and create leads over REST and MCP.
import { sql } from 'drizzle-orm';
import { generatePat, hashToken, tokenPrefix } from '../core/auth/tokens.ts';
import { apiKeys } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import { createOrganizationWithOwner } from '../core/organizations.ts';
import type { Services } from '../core/services.ts';
import { leads } from '../tools/leads/tables.ts';

export const BENCH_SCOPES = ['read:leads', 'write:leads', 'mcp:read', 'mcp:write'];
const BATCH = 1000;
const STATUSES = ['new', 'contacted', 'qualified', 'unqualified', 'client', 'lost'];

export interface SeededOrg {
  orgId: string;
  ownerId: string;
  /** Plain PAT with BENCH_SCOPES. */
  token: string;
}

export async function seedOrganization(services: Services, leadCount: number): Promise<SeededOrg> {
  const db = services.db;
  const { organization, owner } = await db.transaction((tx) =>
    createOrganizationWithOwner(tx, {
      name: 'Benchmark Org',
      plan: 'pro',
      owner: { name: 'Bench Owner', email: `bench-${Date.now()}@example.test`, password: 'bench-password-1' },
    }),
  );
  // Spread over the past so the default "newest first" order is a real index walk, not a tie.
  const start = Date.now() - leadCount * 1000;
  for (let offset = 0; offset < leadCount; offset += BATCH) {
    const rows = [];
    for (let i = offset; i < Math.min(offset + BATCH, leadCount); i++) {
      const at = new Date(start + i * 1000);
      rows.push({
        id: newId(at),
        orgId: organization.id,
        name: `Lead ${i} Company`,
        description: `Seeded lead number ${i}`,
        url: `https://lead-${i}.example.test`,
        status: STATUSES[i % STATUSES.length] ?? 'new',
        ownerId: owner.id,
        tags: i % 3 === 0 ? ['seeded', 'vip'] : ['seeded'],
        custom: { source: 'bench', rank: i },
        createdBy: owner.id,
        createdAt: at,
        updatedAt: at,
      });
    }
    await db.system.insert(leads).values(rows);
  }
  // Measure the steady state, not the minute after a bulk load: on PostgreSQL autovacuum would
  // have vacuumed (visibility map, so counts are index-only scans) and analyzed the table; the
  // embedded server's own maintenance (core/db/client.ts) analyzes PGlite periodically.
  await db.system.execute(sql`vacuum analyze leads`);
  const token = generatePat();
  await db.system.insert(apiKeys).values({
    id: newId(),
    orgId: organization.id,
    userId: owner.id,
    label: 'benchmark',
    tokenHash: hashToken(token),
    tokenPrefix: tokenPrefix(token),
    scopes: BENCH_SCOPES,
  });
  return { orgId: organization.id, ownerId: owner.id, token };
}
