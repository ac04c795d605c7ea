// The smart views store: the view's record shape, who sees and who may change a view, saving,
// listing, changing and deleting views, and running one: its query (query/) compiled into SQL over
// the live leads, optionally reduced to the view's display columns.
import { and, asc, count, desc, eq, ilike, inArray, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { assertTokenAllows, roleHolds, type Surface } from '../../core/access.ts';
import type { AuthContext } from '../../core/auth-context.ts';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike, rowsOf } from '../../core/db/sql.ts';
import { AppError, type ErrorDetail, notFound, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { offsetOf, type Page, paged } from '../../core/schemas.ts';
import type { ToolContext } from '../../core/tool.ts';
import { existingCustomActivityTypeIds } from '../custom-activity-types/store.ts';
import {
  countLiveLeadsWhere,
  LEAD_QUERY_COLUMNS,
  pageLiveLeadIdsWhere,
  readLiveLeadsWhere,
} from '../leads/lookups.ts';
import { countLiveLeads, type LeadRecord, serializeLead } from '../leads/store.ts';
import { smartViewsCatalogue } from './catalogue.ts';
import { BUILT_IN_ACTIVITY_TYPES } from './query/catalogue.ts';
import {
  compileSmartViewQuery,
  compileSmartViewSort,
  factCandidates,
  isIndexedSort,
  spelledFactsSchema,
  spellFacts,
} from './query/compile.ts';
import {
  familiesReadBy,
  type SmartViewQuery,
  type SmartViewSort,
  smartViewQuerySchema,
  smartViewSortSchema,
} from './query/filter-schema.ts';
import { type SmartViewRow, smartViews } from './tables.ts';

export const VISIBILITIES = ['private', 'shared'] as const;
type Visibility = (typeof VISIBILITIES)[number];

// ---------------------------------------------------------------------------------------------
// Record shape

export const smartViewSchema = z
  .object({
    _id: z.string().describe('Smart view id (24 hex characters)'),
    name: z.string().describe('Name of the view'),
    scope: z.string().describe('What the view lists: leads'),
    query: smartViewQuerySchema,
    sort: smartViewSortSchema.nullable().describe('Order of the results, or null for newest first'),
    display_columns: z
      .array(z.string().describe('A lead field or additional property name'))
      .describe('Columns the results show besides _id and name; empty shows whole leads'),
    visibility: z.enum(VISIBILITIES).describe('private or shared'),
    owner_id: z.string().describe('Id of the user who created the view'),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('A saved filter over the leads');
export type SmartViewRecord = z.infer<typeof smartViewSchema>;

function toVisibility(value: string): Visibility {
  return value === 'shared' ? 'shared' : 'private';
}

export function serializeSmartView(row: SmartViewRow): SmartViewRecord {
  const query = smartViewQuerySchema.safeParse(row.query);
  const sort = smartViewSortSchema.safeParse(row.sort);
  return {
    _id: row.id,
    name: row.name,
    scope: row.scope,
    // Stored as validated; a row written by hand that no longer validates shows as matching everything.
    query: query.success ? query.data : { filters: [], logic: 'and' },
    sort: sort.success ? sort.data : null,
    display_columns: [...row.displayColumns],
    visibility: toVisibility(row.visibility),
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Data functions

type ViewContext = Pick<ToolContext, 'db' | 'auth' | 'now' | 'surface'>;

/** Custom activity types named by activity filters must exist in the organization (else a 400 per filter). */
async function assertActivityTypesExist(db: Executor, orgId: string, query: SmartViewQuery): Promise<void> {
  const custom = query.filters.flatMap((f, i) =>
    f.field_type === 'activity' &&
    f.activity_type !== undefined &&
    !BUILT_IN_ACTIVITY_TYPES.some((t) => t === f.activity_type)
      ? [{ index: i, id: f.activity_type }]
      : [],
  );
  if (custom.length === 0) return;
  const known = await existingCustomActivityTypeIds(
    db,
    orgId,
    custom.map((c) => c.id),
  );
  const details: ErrorDetail[] = custom
    .filter((c) => !known.has(c.id))
    .map((c) => ({
      field: `query.filters.${c.index}.activity_type`,
      message: 'no custom activity type with this id in this organization',
      code: 'unknown_activity_type',
    }));
  if (details.length > 0) throw validationError(details);
}

/**
 * A token must hold the read scope of every family the query's filters read (a contact filter needs
 * read:contacts), when saving a view and again when running one: a shared view made by someone else
 * must not let a narrow key learn which leads have a contact with a given e-mail.
 */
function assertFiltersReadable(auth: AuthContext, surface: Surface, query: SmartViewQuery): void {
  for (const family of familiesReadBy(query)) assertTokenAllows(auth.scopes, surface, 'read', family);
}

/** Who sees a view: everyone for shared views, only the owner for private ones. */
function visibleTo(auth: AuthContext): SQL | undefined {
  return or(eq(smartViews.visibility, 'shared'), eq(smartViews.ownerId, auth.userId));
}

/** A view the caller can see, or a 404 (private views of others do not exist for them). */
export async function getVisibleView(
  db: Executor,
  auth: AuthContext,
  id: string,
  lock = false,
): Promise<SmartViewRow> {
  const query = db
    .select()
    .from(smartViews)
    .where(and(eq(smartViews.id, id), eq(smartViews.orgId, auth.orgId), visibleTo(auth)))
    .limit(1);
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Smart view');
  return row;
}

/** Editing or deleting someone else's shared view needs smart_views.manage_shared. */
function assertMayChange(auth: AuthContext, row: SmartViewRow): void {
  if (row.ownerId === auth.userId) return;
  if (!roleHolds(auth.role, smartViewsCatalogue.permissions['smart_views.manage_shared'])) {
    throw new AppError('forbidden', {
      message: "Changing another user's shared view requires the smart_views.manage_shared permission",
      extra: { required_permission: 'smart_views.manage_shared' },
    });
  }
}

/** A result row: the whole lead, or _id, name and the display columns (missing ones as null). */
function projectLead(
  lead: LeadRecord,
  columns: readonly string[],
): { _id: string; name: string; [column: string]: unknown } {
  if (columns.length === 0) return lead;
  const out: { _id: string; name: string; [column: string]: unknown } = { _id: lead._id, name: lead.name };
  for (const column of columns) out[column] = Object.hasOwn(lead, column) ? lead[column] : null;
  return out;
}

export interface NewSmartView {
  name: string;
  scope: string;
  query: SmartViewQuery;
  sort?: SmartViewSort | null | undefined;
  display_columns?: string[] | undefined;
  visibility: Visibility;
}

export async function insertSmartView(
  { db, auth, now, surface }: ViewContext,
  input: NewSmartView,
): Promise<SmartViewRecord> {
  assertFiltersReadable(auth, surface, input.query);
  await assertActivityTypesExist(db, auth.orgId, input.query);
  const [row] = await db
    .insert(smartViews)
    .values({
      id: newId(now),
      orgId: auth.orgId,
      name: input.name,
      scope: input.scope,
      query: input.query,
      sort: input.sort ?? null,
      displayColumns: [...new Set(input.display_columns ?? [])],
      visibility: input.visibility,
      ownerId: auth.userId,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error('insert returned no smart view');
  return serializeSmartView(row);
}

/** The views the caller can see, newest first by default; `search` matches view names. */
export async function listSmartViewPage(
  db: Executor,
  auth: AuthContext,
  input: Page & {
    sort?: string | undefined;
    search?: string | undefined;
    visibility?: Visibility | undefined;
  },
) {
  const conditions: (SQL | undefined)[] = [eq(smartViews.orgId, auth.orgId), visibleTo(auth)];
  if (input.visibility) conditions.push(eq(smartViews.visibility, input.visibility));
  if (input.search) conditions.push(ilike(smartViews.name, `%${escapeLike(input.search)}%`));
  const where = and(...conditions);
  const order: SQL[] = [];
  if (input.sort) {
    const direction = input.sort.startsWith('-') ? desc : asc;
    const field = input.sort.replace(/^-/, '');
    const column =
      field === 'name'
        ? sql`lower(${smartViews.name})`
        : field === 'updated_at'
          ? smartViews.updatedAt
          : smartViews.createdAt;
    order.push(direction(column), direction(smartViews.id));
  } else {
    order.push(desc(smartViews.createdAt), desc(smartViews.id));
  }
  const [counted] = await db.select({ n: count() }).from(smartViews).where(where);
  const rows = await db
    .select()
    .from(smartViews)
    .where(where)
    .orderBy(...order)
    .limit(input.limit)
    .offset(offsetOf(input));
  return paged('smart_views', rows.map(serializeSmartView), counted?.n ?? 0, input);
}

export interface SmartViewChanges {
  name?: string | undefined;
  scope?: string | undefined;
  query?: SmartViewQuery | undefined;
  sort?: SmartViewSort | null | undefined;
  display_columns?: string[] | undefined;
  visibility?: Visibility | undefined;
}

/**
 * Writes the fields sent over a view (merge semantics; `sort: null` clears the sort). Changing
 * another user's shared view needs smart_views.manage_shared; only the creator changes visibility.
 */
export async function writeSmartView(
  { db, auth, now, surface }: ViewContext,
  id: string,
  input: SmartViewChanges,
): Promise<SmartViewRecord> {
  if (input.query) assertFiltersReadable(auth, surface, input.query);
  const before = await getVisibleView(db, auth, id, true);
  assertMayChange(auth, before);
  if (
    input.visibility !== undefined &&
    input.visibility !== before.visibility &&
    before.ownerId !== auth.userId
  ) {
    throw new AppError('forbidden', {
      message: 'Only the creator of a view may change its visibility',
      extra: { required_permission: 'smart_views.edit' },
    });
  }
  if (input.query) await assertActivityTypesExist(db, auth.orgId, input.query);
  const sort: SmartViewSort | null | undefined = input.sort;
  const [row] = await db
    .update(smartViews)
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.scope !== undefined ? { scope: input.scope } : {}),
      ...(input.query !== undefined ? { query: input.query } : {}),
      ...(sort !== undefined ? { sort } : {}),
      ...(input.display_columns !== undefined ? { displayColumns: [...new Set(input.display_columns)] } : {}),
      ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
      updatedAt: now,
    })
    .where(and(eq(smartViews.id, before.id), eq(smartViews.orgId, auth.orgId)))
    .returning();
  if (!row) throw notFound('Smart view');
  return serializeSmartView(row);
}

/** Deletes a view for good (views have no trash), under the same rule as changing it. */
export async function deleteSmartViewRow(db: Executor, auth: AuthContext, id: string): Promise<void> {
  const row = await getVisibleView(db, auth, id, true);
  assertMayChange(auth, row);
  await db.delete(smartViews).where(and(eq(smartViews.id, row.id), eq(smartViews.orgId, auth.orgId)));
}

/** A page of the live leads matching a view, in its sort order, reduced to its display columns. */
export async function runSmartViewPage(
  { db, auth, surface }: Pick<ToolContext, 'db' | 'auth' | 'surface'>,
  id: string,
  input: Page,
) {
  const view = serializeSmartView(await getVisibleView(db, auth, id));
  assertFiltersReadable(auth, surface, view.query);
  const narrowed = await readFactCandidates(db, view.query, auth.orgId, NARROW_LIMIT);
  if (narrowed !== null && narrowed.length <= NARROW_LIMIT) {
    const where = compileSmartViewQuery(view.query, auth.orgId, narrowed);
    return narrowedPage(db, auth.orgId, view, where, input);
  }
  const where = compileSmartViewQuery(view.query, auth.orgId);
  const total = await countLiveLeadsWhere(db, auth.orgId, where);
  if (total === 0 || offsetOf(input) >= total) return paged('leads', [], total, input);
  if (isIndexedSort(view.sort) && (await pageWalkIsShort(db, auth.orgId, total, input))) {
    // The filters are opaque to the planner (jsonb expressions, EXISTS over activities), so it
    // underestimates the matches and sorts a full scan. When the count says a walk down the
    // order's index reaches this page within PAGE_WALK_LIMIT leads, have it walk (for the rest of
    // this transaction, which ends with this page): 1M leads, 2,153 matches, 860 ms -> ~40 ms.
    await db.execute(
      sql`select set_config('enable_sort', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`,
    );
  }
  const rows = await readLiveLeadsWhere(db, auth.orgId, where, compileSmartViewSort(view.sort), {
    limit: input.limit,
    offset: offsetOf(input),
  });
  const items = rows.map((row) => projectLead(serializeLead(row), view.display_columns));
  return paged('leads', items, total, input);
}

/**
 * The ids of the leads holding the facts of the query's served filters (query/compile.ts
 * factCandidates), at most `cap` + 1 of them, or null when no filter is served: the facts spelled
 * by PostgreSQL, then their leads read, two short round trips.
 */
export async function readFactCandidates(
  db: Executor,
  query: SmartViewQuery,
  orgId: string,
  cap: number,
): Promise<string[] | null> {
  const spell = spellFacts(query);
  if (spell === null) return null;
  const [spelled] = rowsOf(await db.execute(spell));
  const { facts } = spelledFactsSchema.parse(spelled);
  const rows = rowsOf(await db.execute(factCandidates(query, orgId, cap, facts)));
  return z
    .array(z.object({ lead_id: z.string() }))
    .parse(rows)
    .map((r) => r.lead_id);
}

/**
 * Most leads a view's facts may leave for the view to be read from them by primary key. Past it,
 * reading that many leads one by one costs more than PostgreSQL's own plan over all leads (1M leads
 * on the bench machine: 41,897 leads by key took 2.7 s where the plain plan took 0.7 s).
 */
const NARROW_LIMIT = 10_000;

/**
 * A page of a view narrowed to the candidates of its facts (query/compile.ts factCandidates): the
 * page's ids and the total come from one pass over the candidates (no walk down the sort index, which
 * would test every lead it passes instead), then the page's leads are read by id.
 */
async function narrowedPage(db: Executor, orgId: string, view: SmartViewRecord, where: SQL, input: Page) {
  const order = compileSmartViewSort(view.sort);
  const { ids, total } = await pageLiveLeadIdsWhere(db, orgId, where, order, {
    limit: input.limit,
    offset: offsetOf(input),
  });
  if (total === null) {
    // Past the last page (or nothing matches): the count alone.
    const counted = offsetOf(input) === 0 ? 0 : await countLiveLeadsWhere(db, orgId, where);
    return paged('leads', [], counted, input);
  }
  const rows = await readLiveLeadsWhere(db, orgId, inArray(LEAD_QUERY_COLUMNS.id, ids), order, {
    limit: input.limit,
    offset: 0,
  });
  const items = rows.map((row) => projectLead(serializeLead(row), view.display_columns));
  return paged('leads', items, total, input);
}

/** Leads a page read down the sort index may pass before the planner's own plan is preferred. */
const PAGE_WALK_LIMIT = 50_000;

/**
 * Whether walking the sort index reaches the end of the requested page within PAGE_WALK_LIMIT
 * leads, assuming matches are spread evenly: (offset + limit) * live leads / matches.
 */
async function pageWalkIsShort(db: Executor, orgId: string, total: number, page: Page): Promise<boolean> {
  const live = await countLiveLeads(db, orgId);
  return ((offsetOf(page) + page.limit) * live) / total <= PAGE_WALK_LIMIT;
}
