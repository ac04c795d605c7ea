// The floor: the least a server on this stack (Node, Hono on @hono/node-server, `pg`, PostgreSQL
// with row-level security) can do to answer the benchmark's requests, written by hand here, outside
// the product, so that `npm run bench` can report each of the product's scenarios as a ratio to it.
//
// Same work as the product, nothing more:
// - the bearer token is hashed (SHA-256) and looked up in a map filled once (a cached credential);
// - the tenant transaction is the product's: crm_app role and app.org_id set locally, so the same
//   row-level security policies run; the transaction start and the tenant settings go in one
//   round trip, the count rides in the page query (the same counter the product reads), then commit:
//   three round trips for a page;
// - a page is serialized to the byte-identical JSON the product answers (bench/run.ts checks that
//   before any load), known fields first, then the lead's additional properties;
// - a create validates the same body, inserts the lead and its `lead.created` outbox row in one
//   tenant transaction, and answers 201 with the lead.
// It takes no rate-limit, log, secure-header or idempotency step: each of those is the product's own
// choice, and the ratio shows what they cost.
import { createHash, randomBytes } from 'node:crypto';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import pg from 'pg';
import { listenOnLoopback } from './server-process.ts';

/** The columns the product's lead list selects (every column but the search vector). */
const LEAD_COLUMNS =
  'id, org_id, name, description, url, status, owner_id, tags, custom, converted_at, created_by, created_at, updated_at, deleted_at, deleted_by';

/**
 * One page of live leads, newest first, with the organization's live total from the ledger the
 * product reads for an unfiltered list (core/live-counts.ts, tools/leads `liveLeadsTotal`), or from
 * the counter row that ledger replaced (`lead_counts`), so the same floor measures older commits.
 */
function pageSql(ledger: boolean): string {
  const total = ledger
    ? "(select coalesce(sum(delta), 0)::bigint from live_counts where org_id = $1 and kind = 'leads')"
    : '(select coalesce(sum(live), 0)::bigint from lead_counts where org_id = $1)';
  return `select ${LEAD_COLUMNS}, ${total} as total
  from leads where org_id = $1 and deleted_at is null
  order by created_at desc nulls first, id desc nulls first limit $2 offset $3`;
}

const INSERT_SQL = `insert into leads (id, org_id, name, description, url, status, owner_id, tags, custom, converted_at, created_by, created_at, updated_at)
  values ($1, $2, $3, null, null, $4, $5, $6, '{}'::jsonb, null, $5, $7, $7) returning ${LEAD_COLUMNS}`;

const OUTBOX_SQL = 'insert into outbox_events (id, org_id, event, data) values ($1, $2, $3, $4)';

const STATUSES = new Set(['new', 'contacted', 'qualified', 'unqualified', 'client', 'lost']);

interface LeadRow {
  id: string;
  name: string;
  description: string | null;
  url: string | null;
  status: string;
  owner_id: string | null;
  tags: string[];
  custom: Record<string, unknown>;
  converted_at: Date | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

interface Credential {
  orgId: string;
  userId: string;
}

function serialize(row: LeadRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    _id: row.id,
    name: row.name,
    description: row.description,
    url: row.url,
    status: row.status,
    owner_id: row.owner_id,
    tags: row.tags,
    converted_at: row.converted_at === null ? null : row.converted_at.toISOString(),
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
  for (const key in row.custom) out[key] = row.custom[key];
  return out;
}

/** `begin` and the tenant settings in one simple-protocol round trip (ids are [0-9a-f] only). */
function beginTenant(orgId: string): string {
  if (!/^[0-9a-f]+$/.test(orgId)) throw new Error(`unexpected organization id ${orgId}`);
  return `begin; select set_config('app.org_id', '${orgId}', true), set_config('role', 'crm_app', true)`;
}

function newId(): string {
  return randomBytes(12).toString('hex');
}

export interface Floor {
  url: string;
  close(): Promise<void>;
}

/** The floor's app and its pool, against `databaseUrl`, knowing the one `token` (in-process use: app.request). */
export async function createFloorApp(
  databaseUrl: string,
  token: string,
  poolMax: number,
): Promise<{ app: Hono; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax });
  pool.on('error', () => {});
  const hash = (t: string) => createHash('sha256').update(t).digest('hex');
  const credentials = new Map<string, Credential>();
  const { rows } = await pool.query<{ org_id: string; user_id: string }>(
    'select org_id, user_id from api_keys where token_hash = $1',
    [hash(token)],
  );
  const found = rows[0];
  if (!found) throw new Error('the floor found no API key for the benchmark token');
  credentials.set(hash(token), { orgId: found.org_id, userId: found.user_id });
  const { rows: ledgers } = await pool.query<{ ledger: boolean }>(
    "select to_regclass('live_counts') is not null as ledger",
  );
  const PAGE_SQL = pageSql(ledgers[0]?.ledger === true);

  const caller = (header: string | undefined): Credential | undefined =>
    header?.startsWith('Bearer ') ? credentials.get(hash(header.slice(7))) : undefined;

  async function inTenant<T>(orgId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query(beginTenant(orgId));
      const result = await fn(client);
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  const app = new Hono();
  app.get('/api/v1/leads', async (c) => {
    const who = caller(c.req.header('authorization'));
    if (!who) return c.json({ error: 'unauthorized' }, 401);
    const limit = Number(c.req.query('limit') ?? 25);
    const page = Number(c.req.query('page') ?? 1);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(page) || page < 1) {
      return c.json({ error: 'validation_failed' }, 400);
    }
    const result = await inTenant(who.orgId, (client) =>
      client.query<LeadRow & { total: string }>(PAGE_SQL, [who.orgId, limit, (page - 1) * limit]),
    );
    const total = Number(result.rows[0]?.total ?? 0);
    return c.json({
      leads: result.rows.map(serialize),
      total,
      page,
      limit,
      totalPages: Math.ceil(total / limit),
    });
  });
  app.post('/api/v1/leads', async (c) => {
    const who = caller(c.req.header('authorization'));
    if (!who) return c.json({ error: 'unauthorized' }, 401);
    const body: unknown = await c.req.json();
    if (typeof body !== 'object' || body === null) return c.json({ error: 'validation_failed' }, 400);
    const { name, status = 'new', tags = [] } = body as { name?: unknown; status?: unknown; tags?: unknown };
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      typeof status !== 'string' ||
      !STATUSES.has(status) ||
      !Array.isArray(tags) ||
      !tags.every((t) => typeof t === 'string')
    ) {
      return c.json({ error: 'validation_failed' }, 400);
    }
    const lead = await inTenant(who.orgId, async (client) => {
      const now = new Date();
      const inserted = await client.query<LeadRow>(INSERT_SQL, [
        newId(),
        who.orgId,
        name,
        status,
        who.userId,
        [...new Set(tags)],
        now,
      ]);
      const row = inserted.rows[0];
      if (!row) throw new Error('insert returned no row');
      const record = serialize(row);
      await client.query(OUTBOX_SQL, [newId(), who.orgId, 'lead.created', record]);
      return record;
    });
    return c.json({ lead }, 201);
  });

  return { app, close: () => pool.end() };
}

/** Starts the floor server on a free port against `databaseUrl`, knowing the one `token`. */
export async function startFloor(databaseUrl: string, token: string, poolMax: number): Promise<Floor> {
  const floor = await createFloorApp(databaseUrl, token, poolMax);
  const server: ServerType = createAdaptorServer({ fetch: floor.app.fetch });
  const url = await listenOnLoopback(server);
  return {
    url,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await floor.close();
    },
  };
}
