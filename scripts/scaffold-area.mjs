// `npm run scaffold:area -- <name>`: writes a new working area the way the house builds one
// (docs/architecture.md "How to add a resource"): tools/<name>/ (table with trash columns, store on
// the record helper, CRUD tools, routes, catalogue, defineArea), test/<name>/ (the test kit and a CRUD
// test over REST), the area's line in tools/index.ts, the migration (drizzle-kit generate, then the
// row-level security every tenant table carries) and the regenerated MCP manifest. Nothing else is
// touched: test/scaffold.test.ts runs this in a scratch copy and checks `git status` says so.
//
// The scaffolded area emits no events; the one place to add them is marked EVENTS in its index.ts
// and store.ts (docs/architecture.md "How to add a resource").
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const AREA_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** The spellings of one area name: folder, SQL table, identifiers, tool and record names. */
function namesOf(name) {
  const words = name.split('-');
  const singularWords = [...words.slice(0, -1), singularOf(words.at(-1))];
  const camel = (ws) => ws.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
  const pascal = (ws) => ws.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const snake = words.join('_');
  const one = singularWords.join('_');
  return {
    folder: name,
    snake,
    one,
    // A name that is not a plural lists under the same key it reads one record with.
    many: snake,
    camel: camel(words),
    pascal: pascal(words),
    oneCamel: camel(singularWords),
    onePascal: pascal(singularWords),
    label: `${singularWords.join(' ')[0].toUpperCase()}${singularWords.join(' ').slice(1)}`,
    words: words.join(' '),
    oneWords: singularWords.join(' '),
  };
}

function singularOf(word) {
  if (word.endsWith('ies') && word.length > 3) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ses') || word.endsWith('xes')) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Refuses a name the house cannot take: not kebab-case, or an area, kit or test folder that exists. */
function checkName(root, name) {
  if (!name || !AREA_NAME.test(name)) {
    return `The area name must be kebab-case (a-z, 0-9, single hyphens, a letter first): "${name ?? ''}"`;
  }
  if (existsSync(join(root, 'tools', name))) return `tools/${name} exists already`;
  if (existsSync(join(root, 'test', name))) return `test/${name} exists already`;
  const n = namesOf(name);
  const index = readFileSync(join(root, 'tools/index.ts'), 'utf8');
  if (index.includes(`${n.camel}Area`)) return `tools/index.ts already names ${n.camel}Area`;
  const tables = readdirSync(join(root, 'tools'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(root, 'tools', d.name, 'tables.ts'))
    .filter(existsSync);
  for (const file of [join(root, 'core/db/schema.ts'), ...tables]) {
    if (readFileSync(file, 'utf8').includes(`pgTable(\n  '${n.snake}'`))
      return `a table ${n.snake} exists already`;
    if (readFileSync(file, 'utf8').includes(`pgTable('${n.snake}'`))
      return `a table ${n.snake} exists already`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Templates (one per generated file)

function tablesTs(n) {
  return `// The ${n.words} area's table: one tenant table with the trash columns (core/db/schema.ts helpers).
import { sql } from 'drizzle-orm';
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, deletedAt, deletedBy, id, orgId, updatedAt } from '../../core/db/schema.ts';

export const ${n.camel} = pgTable(
  '${n.snake}',
  {
    id: id(),
    orgId: orgId(),
    name: text('name').notNull(),
    createdBy: text('created_by'),
    deletedAt: deletedAt(),
    deletedBy: deletedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('${n.snake}_live_created_idx')
      .on(t.orgId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql\`\${t.deletedAt} is null\`),
    index('${n.snake}_org_trash_idx')
      .on(t.orgId, t.deletedAt.desc(), t.id.desc())
      .where(sql\`\${t.deletedAt} is not null\`),
  ],
);

export type ${n.onePascal}Row = typeof ${n.camel}.$inferSelect;
`;
}

function storeTs(n) {
  return `// The ${n.words} store: the record shape, creating and renaming a ${n.oneWords}, the list, and the
// trash entry, on the record helper (core/records.ts).
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../core/db/client.ts';
import { escapeLike } from '../../core/db/sql.ts';
import {
  auditFields,
  auditValues,
  defineRecordTable,
  type ListParams,
  newRecordStamp,
  type PagedList,
  type RecordContext,
  type SortColumn,
} from '../../core/records.ts';
import type { TrashType } from '../../core/trash.ts';
import { type ${n.onePascal}Row, ${n.camel} } from './tables.ts';

export const ${n.oneCamel}Schema = z
  .object({
    _id: z.string().describe('${n.label} id (24 hex characters)'),
    name: z.string().describe('Name of the ${n.oneWords}'),
    ...auditFields('${n.oneWords}'),
  })
  .describe('A ${n.oneWords}');
export type ${n.onePascal}Record = z.output<typeof ${n.oneCamel}Schema>;

export function serialize${n.onePascal}(row: ${n.onePascal}Row): ${n.onePascal}Record {
  return { _id: row.id, name: row.name, ...auditValues(row) };
}

/** The ${n.snake} table on the record helper: lookups, lists, trash and restore. */
export const ${n.oneCamel}Records = defineRecordTable<${n.onePascal}Row>({
  label: '${n.label}',
  table: ${n.camel},
  select: (db) => db.select().from(${n.camel}).$dynamic(),
  update: (db, set, where) => db.update(${n.camel}).set(set).where(where).returning(),
});

/** Creates a ${n.oneWords}. EVENTS: announce it here once the area declares a \`${n.one}.created\` event. */
export async function insert${n.onePascal}(ctx: RecordContext, name: string): Promise<${n.onePascal}Record> {
  const [row] = await ctx.db
    .insert(${n.camel})
    .values({ ...newRecordStamp(ctx), name })
    .returning();
  if (!row) throw new Error('insert returned no ${n.oneWords}');
  return serialize${n.onePascal}(row);
}

/** Changes the fields sent of a live ${n.oneWords} (a 404 otherwise). */
export async function write${n.onePascal}(
  ctx: RecordContext,
  id: string,
  changes: { name?: string | undefined },
): Promise<${n.onePascal}Record> {
  const before = await ${n.oneCamel}Records.getLive(ctx.db, ctx.auth.orgId, id, true);
  const row = await ${n.oneCamel}Records.write(ctx.db, ctx.auth.orgId, before.id, {
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    updatedAt: ctx.now,
  });
  return serialize${n.onePascal}(row);
}

const SORT_COLUMNS: Record<'name' | 'created_at' | 'updated_at', SortColumn> = {
  name: ${n.camel}.name,
  created_at: ${n.camel}.createdAt,
  updated_at: ${n.camel}.updatedAt,
};

/** The organization's live ${n.words}, newest first; \`search\` matches words in the name. */
export function list${n.pascal}Page(
  db: Executor,
  orgId: string,
  params: ListParams,
): Promise<PagedList<'${n.many}', ${n.onePascal}Record>> {
  return ${n.oneCamel}Records.list(db, '${n.many}', serialize${n.onePascal}, params, {
    conditions: ${n.oneCamel}Records.liveConditions(orgId),
    sortColumns: SORT_COLUMNS,
    match: (search) => ({ where: sql\`\${${n.camel}.name} ilike \${\`%\${escapeLike(search)}%\`}\` }),
  });
}

async function restore${n.onePascal}(ctx: RecordContext, id: string): Promise<${n.onePascal}Record> {
  const { row } = await ${n.oneCamel}Records.restore(ctx, id);
  return serialize${n.onePascal}(row);
}

/** The ${n.oneWords} entry of the trash registry; its name is its name there. */
export const ${n.oneCamel}TrashTypes: readonly TrashType[] = [
  ${n.oneCamel}Records.trashType({
    type: '${n.one}',
    recordKey: '${n.one}',
    resource: '${n.snake}',
    schema: ${n.oneCamel}Schema,
    name: ${n.camel}.name,
    restore: restore${n.onePascal},
  }),
];
`;
}

function toolsTs(n) {
  return `// ${n.label} tools: list, get, create, update and delete (to the trash). This file declares the
// tools; the data functions are store.ts.
import { z } from 'zod';
import { listParams, messageOutput, objectId, pagedOutput } from '../../core/schemas.ts';
import { NO_NUL, nulMessage } from '../../core/text-rules.ts';
import { defineTool } from '../../core/tool.ts';
import {
  insert${n.onePascal},
  list${n.pascal}Page,
  serialize${n.onePascal},
  ${n.oneCamel}Records,
  ${n.oneCamel}Schema,
  write${n.onePascal},
} from './store.ts';

const MAX_NAME = 200;

const nameField = z
  .string()
  .trim()
  .min(1)
  .max(MAX_NAME)
  .refine(NO_NUL, nulMessage)
  .describe(\`Name of the ${n.oneWords}, 1-\${MAX_NAME} characters\`);
const idShape = { id: objectId('${n.oneWords}') };
const output = z.object({ ${n.one}: ${n.oneCamel}Schema });
const SORT_FIELDS = ['name', 'created_at', 'updated_at'] as const;

const access = (
  kind: 'read' | 'write',
  permission: '${n.snake}.view' | '${n.snake}.create' | '${n.snake}.edit' | '${n.snake}.delete',
) => ({ kind, resource: '${n.snake}', permission }) as const;

export const list${n.pascal} = defineTool({
  name: 'list_${n.many}',
  title: 'List ${n.words}',
  description:
    "Lists the organization's live ${n.words}, newest first by default; \`search\` matches words in the name. Paginated: " +
    'returns \`${n.many}\` plus \`total\`, \`page\`, \`limit\`, \`totalPages\`; request page 1, then increment \`page\` until page >= totalPages.',
  input: z.strictObject({ ...listParams(SORT_FIELDS) }),
  output: pagedOutput('${n.many}', ${n.oneCamel}Schema),
  access: access('read', '${n.snake}.view'),
  toolset: '${n.snake}',
  handler: (input, { db, auth }) => list${n.pascal}Page(db, auth.orgId, input),
});

export const get${n.onePascal} = defineTool({
  name: 'get_${n.one}',
  title: 'Get a ${n.oneWords}',
  description: 'Returns one ${n.oneWords} by id (find ids with list_${n.many}). Trashed ones answer 404.',
  input: z.strictObject(idShape),
  output,
  access: access('read', '${n.snake}.view'),
  toolset: '${n.snake}',
  async handler(input, { db, auth }) {
    return { ${n.one}: serialize${n.onePascal}(await ${n.oneCamel}Records.getLive(db, auth.orgId, input.id)) };
  },
});

export const create${n.onePascal} = defineTool({
  name: 'create_${n.one}',
  title: 'Create a ${n.oneWords}',
  description: 'Creates a ${n.oneWords} with a \`name\` and returns it.',
  input: z.strictObject({ name: nameField }),
  output,
  access: access('write', '${n.snake}.create'),
  toolset: '${n.snake}',
  async handler(input, ctx) {
    return { ${n.one}: await insert${n.onePascal}(ctx, input.name) };
  },
});

export const update${n.onePascal} = defineTool({
  name: 'update_${n.one}',
  title: 'Update a ${n.oneWords}',
  description: 'Changes only the fields sent of one ${n.oneWords} and returns it.',
  input: z.strictObject({ ...idShape, name: nameField.optional() }),
  output,
  access: access('write', '${n.snake}.edit'),
  annotations: { idempotentHint: true },
  toolset: '${n.snake}',
  async handler(input, ctx) {
    return { ${n.one}: await write${n.onePascal}(ctx, input.id, { name: input.name }) };
  },
});

export const delete${n.onePascal} = defineTool({
  name: 'delete_${n.one}',
  title: 'Delete a ${n.oneWords}',
  description:
    'Moves a ${n.oneWords} to the trash: it disappears from list_${n.many} and can be brought back with restore_trash_item.',
  input: z.strictObject(idShape),
  output: messageOutput,
  access: access('write', '${n.snake}.delete'),
  annotations: { destructiveHint: true, idempotentHint: true },
  toolset: '${n.snake}',
  async handler(input, ctx) {
    await ${n.oneCamel}Records.trash(ctx, input.id);
    return { message: '${n.label} moved to the trash' };
  },
});

export const ${n.oneCamel}Tools = [list${n.pascal}, get${n.onePascal}, create${n.onePascal}, update${n.onePascal}, delete${n.onePascal}];
`;
}

function routesTs(n) {
  return `// ${n.label} routes: the collection and one ${n.oneWords}. PUT merges exactly like PATCH, as on every record resource.
import { type Route, route } from '../../core/route.ts';
import { create${n.onePascal}, delete${n.onePascal}, get${n.onePascal}, list${n.pascal}, update${n.onePascal} } from './tools.ts';

export const ${n.oneCamel}Routes: Route[] = [
  route('GET', '/${n.folder}', list${n.pascal}),
  route('POST', '/${n.folder}', create${n.onePascal}),
  route('GET', '/${n.folder}/:id', get${n.onePascal}),
  route('PATCH', '/${n.folder}/:id', update${n.onePascal}),
  route('PUT', '/${n.folder}/:id', update${n.onePascal}),
  route('DELETE', '/${n.folder}/:id', delete${n.onePascal}),
];
`;
}

function catalogueTs(n) {
  return `// What the ${n.words} area brings to the kernel's catalogues: its role permissions with the tier of
// role that holds each and its token scope family (core/access.ts), and its MCP toolset
// (core/toolsets.ts). tools/index.ts collects every area's declaration; the declaration merging
// below keeps the names checked at compile time.
import type { AreaCatalogue } from '../../core/catalogue.ts';

export const ${n.camel}Catalogue = {
  permissions: {
    '${n.snake}.view': 'read',
    '${n.snake}.create': 'write',
    '${n.snake}.edit': 'write',
    '${n.snake}.delete': 'write',
  },
  // What the family covers, in the words the OAuth consent page shows a person ("See …").
  scopes: { ${n.snake}: '${n.words}' },
  toolsets: {
    ${n.snake}: '${n.label} records: list, read, create, update and delete them.',
  },
} as const satisfies AreaCatalogue;

type ${n.pascal}Permissions = (typeof ${n.camel}Catalogue)['permissions'];

type ${n.pascal}Scopes = (typeof ${n.camel}Catalogue)['scopes'];

type ${n.pascal}Toolsets = (typeof ${n.camel}Catalogue)['toolsets'];

declare module '../../core/toolsets.ts' {
  interface ToolsetCatalog extends ${n.pascal}Toolsets {}
}

declare module '../../core/access.ts' {
  interface ScopeFamilyCatalog extends ${n.pascal}Scopes {}
  interface PermissionCatalog extends ${n.pascal}Permissions {}
}
`;
}

function indexTs(n) {
  return `import { defineArea } from '../../core/area.ts';
import { ${n.camel}Catalogue } from './catalogue.ts';
import { ${n.oneCamel}Routes } from './routes.ts';
import { ${n.oneCamel}TrashTypes } from './store.ts';
import { ${n.oneCamel}Tools } from './tools.ts';

/** ${n.label} records of the organization (scaffolded by npm run scaffold:area). */
export const ${n.camel}Area = defineArea({
  name: '${n.folder}',
  uses: [],
  tools: ${n.oneCamel}Tools,
  routes: ${n.oneCamel}Routes,
  tags: { '${n.folder}': '${n.label} records: list, read, create, update and delete them.' },
  brings: ${n.camel}Catalogue,
  permissions: ['${n.snake}.view', '${n.snake}.create', '${n.snake}.edit', '${n.snake}.delete'],
  // EVENTS: the events the area emits, once declared (docs/architecture.md "How to add a resource").
  events: [],
  toolsets: ['${n.snake}'],
  trashTypes: ${n.oneCamel}TrashTypes,
});
`;
}

function kitTs(n) {
  return `// The test kit of tools/${n.folder} (test/README.md "Test kits").
import { eq } from 'drizzle-orm';
import { newId } from '../../core/ids.ts';
import { ${n.camel} } from '../../tools/${n.folder}/tables.ts';
import { defineKit, NAME_BODY, NO_BODY } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: '${n.folder}',
  bodies: {
    create_${n.one}: NAME_BODY,
    update_${n.one}: NAME_BODY,
    delete_${n.one}: NO_BODY,
  },
  victims: {
    '/${n.folder}': async ({ t, org }) => {
      const id = newId();
      await t.services.db.system.insert(${n.camel}).values({ id, orgId: org.orgId, name: 'Victim ${n.oneWords}' });
      return { id, read: () => t.services.db.system.select().from(${n.camel}).where(eq(${n.camel}.id, id)) };
    },
  },
  fuzz: {
    seed: async ({ seed }) => {
      for (const n of [1, 2, 3]) await seed('/api/v1/${n.folder}', { name: \`Fuzz ${n.oneWords} \${n}\` });
    },
  },
});
`;
}

function areaTestTs(n) {
  return `// Locks in ${n.words} over REST: create, get, list with search, update, delete to the trash and restore, another organization's 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, readOutput, type TestContext, type TestOrg, TOOL } from '../fixtures/index.ts';

let t: TestContext;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  t = await createTestContext({}, { withoutRateLimits: true });
  org = await t.createOrg();
  other = await t.createOrg({ name: 'Other Org' });
});
afterAll(() => t.close());

async function create(name: string, as: TestOrg = org) {
  const res = await t.request('POST', '/api/v1/${n.folder}', { token: as.token, body: { name } });
  return (await readOutput(res, TOOL.create_${n.one}, 201)).${n.one};
}

describe('${n.folder}', () => {
  it('creates a ${n.oneWords} and reads it back', async () => {
    const created = await create('  First  ');
    expect(created).toMatchObject({ name: 'First', created_by: org.ownerId });
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    const res = await t.request('GET', \`/api/v1/${n.folder}/\${created._id}\`, { token: org.token });
    expect((await readOutput(res, TOOL.get_${n.one})).${n.one}).toEqual(created);
  });

  it('lists the live ${n.words}, newest first, and searches by name', async () => {
    const a = await create('Alpha item');
    const b = await create('Beta item');
    const all = await readOutput(
      await t.request('GET', '/api/v1/${n.folder}?limit=100', { token: org.token }),
      TOOL.list_${n.many},
    );
    const ids = all.${n.many}.map((r) => r._id);
    expect(ids.indexOf(b._id)).toBeLessThan(ids.indexOf(a._id));
    const found = await readOutput(
      await t.request('GET', '/api/v1/${n.folder}?search=alpha', { token: org.token }),
      TOOL.list_${n.many},
    );
    expect(found.${n.many}.map((r) => r._id)).toEqual([a._id]);
  });

  it('updates only the fields sent, by PATCH and PUT', async () => {
    const created = await create('Before');
    for (const method of ['PATCH', 'PUT'] as const) {
      const res = await t.request(method, \`/api/v1/${n.folder}/\${created._id}\`, {
        token: org.token,
        body: { name: \`After \${method}\` },
      });
      expect((await readOutput(res, TOOL.update_${n.one})).${n.one}.name).toBe(\`After \${method}\`);
    }
  });

  it('refuses an empty name with a 400 naming the field', async () => {
    const res = await t.request('POST', '/api/v1/${n.folder}', { token: org.token, body: { name: ' ' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('name');
  });

  it('moves a deleted ${n.oneWords} to the trash and restores it from there', async () => {
    const created = await create('Trashed');
    const del = await t.request('DELETE', \`/api/v1/${n.folder}/\${created._id}\`, { token: org.token });
    expect(del.status).toBe(200);
    const gone = await t.request('GET', \`/api/v1/${n.folder}/\${created._id}\`, { token: org.token });
    expect(gone.status).toBe(404);
    const restored = await t.request('POST', \`/api/v1/trash/\${created._id}/restore\`, { token: org.token });
    expect(restored.status).toBe(200);
    const back = await t.request('GET', \`/api/v1/${n.folder}/\${created._id}\`, { token: org.token });
    expect(back.status).toBe(200);
  });

  it("answers 404 for another organization's ${n.oneWords}", async () => {
    const created = await create('Private');
    const res = await t.request('GET', \`/api/v1/${n.folder}/\${created._id}\`, { token: other.token });
    expect(res.status).toBe(404);
  });
});
`;
}

// ---------------------------------------------------------------------------------------------
// Edits outside the area folders

/** Adds the area's import and its entry at the end of the list of record areas in tools/index.ts. */
function addToRegistry(source, n) {
  const entry = `${n.camel}Area`;
  const importLine = `import { ${entry} } from './${n.folder}/index.ts';`;
  // The one list of areas (AREA_LIST, in listing order: the new area goes last); its closing line
  // may carry a type clause (`] as const satisfies ...;`).
  const list = ['AREA_LIST']
    .map((name) => new RegExp(`(const ${name}\\b[^=]*= \\[\\n)([\\s\\S]*?)(\\n\\][^\\n]*;)`).exec(source))
    .find((found) => found !== null);
  if (!list) throw new Error('tools/index.ts: no list of areas (AREA_LIST) to add the area to');
  const withEntry =
    source.slice(0, list.index) +
    list[1] +
    list[2] +
    `\n  ${entry},` +
    list[3] +
    source.slice(list.index + list[0].length);
  // The import goes among the area imports in path order (Biome's organizeImports keeps that order).
  const lines = withEntry.split('\n');
  const areaImports = lines
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => /^import .* from '\.\/[^']+';$/.test(line));
  const after = areaImports.filter(({ line }) => pathOf(line) < `./${n.folder}/index.ts`).at(-1);
  const at = after ? after.i + 1 : (areaImports[0]?.i ?? 0);
  lines.splice(at, 0, importLine);
  return lines.join('\n');
}

function pathOf(importLine) {
  return /from '([^']+)'/.exec(importLine)?.[1] ?? '';
}

/** The row-level security every tenant table carries (as in migration 0007). */
function rlsStatements(table) {
  return `--> statement-breakpoint
ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON ${table}
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO crm_app;
`;
}

function run(root, command, args) {
  execFileSync(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
}

/** The area's page in docs/areas/ (every area has one: test/docs-areas.test.ts), to be filled in. */
function pageMd(n) {
  return `# ${n.folder}

${n.label} records of an organization (generated by \`npm run scaffold:area\`: describe what the
area holds and its own rules here).

## Tools

| Tool | Route | Access |
|---|---|---|
| \`list_${n.many}\` | \`GET /api/v1/${n.folder}\` | read, \`${n.snake}.view\` |
| \`get_${n.one}\` | \`GET /api/v1/${n.folder}/{id}\` | read, \`${n.snake}.view\` |
| \`create_${n.one}\` | \`POST /api/v1/${n.folder}\` | write, \`${n.snake}.create\` |
| \`update_${n.one}\` | \`PATCH\` or \`PUT /api/v1/${n.folder}/{id}\` | write, \`${n.snake}.edit\` |
| \`delete_${n.one}\` | \`DELETE /api/v1/${n.folder}/{id}\` | write, \`${n.snake}.delete\` |

## Declares

Its permissions, scope family and toolset in \`tools/${n.folder}/catalogue.ts\`; a trash type; uses \`leads\`.
`;
}

/** Adds the page's row to the table of docs/areas/README.md, after its last row. */
function addToAreaIndex(text, n) {
  const lines = text.split('\n');
  let last = -1;
  lines.forEach((line, i) => {
    if (/^\| \[[a-z0-9-]+\]\([a-z0-9-]+\.md\) \|/.test(line)) last = i;
  });
  if (last < 0) throw new Error('docs/areas/README.md has no table of areas');
  lines.splice(last + 1, 0, `| [${n.folder}](${n.folder}.md) | ${n.words} (scaffolded) |`);
  return lines.join('\n');
}

/** Writes the area; returns the files it wrote or changed, relative to `root`. */
function scaffoldArea(root, name) {
  const problem = checkName(root, name);
  if (problem) throw new Error(problem);
  const n = namesOf(name);
  const files = {
    [`tools/${name}/tables.ts`]: tablesTs(n),
    [`tools/${name}/store.ts`]: storeTs(n),
    [`tools/${name}/tools.ts`]: toolsTs(n),
    [`tools/${name}/routes.ts`]: routesTs(n),
    [`tools/${name}/catalogue.ts`]: catalogueTs(n),
    [`tools/${name}/index.ts`]: indexTs(n),
    [`test/${name}/kit.ts`]: kitTs(n),
    [`test/${name}/${name}.test.ts`]: areaTestTs(n),
    [`docs/areas/${name}.md`]: pageMd(n),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const indexPath = join(root, 'tools/index.ts');
  writeFileSync(indexPath, addToRegistry(readFileSync(indexPath, 'utf8'), n));
  const areaIndexPath = join(root, 'docs/areas/README.md');
  writeFileSync(areaIndexPath, addToAreaIndex(readFileSync(areaIndexPath, 'utf8'), n));

  const migrations = join(root, 'core/db/migrations');
  const before = new Set(readdirSync(migrations));
  run(root, 'npx', ['drizzle-kit', 'generate', '--name', n.snake]);
  const sqlFile = readdirSync(migrations).find((f) => f.endsWith('.sql') && !before.has(f));
  if (!sqlFile) throw new Error('drizzle-kit generate wrote no migration');
  const sqlPath = join(migrations, sqlFile);
  const generated = readFileSync(sqlPath, 'utf8').replace(/\s*$/, '\n');
  writeFileSync(sqlPath, generated + rlsStatements(n.snake));

  run(root, 'npx', ['biome', 'check', '--write', `tools/${name}`, `test/${name}`, 'tools/index.ts']);
  run(root, 'npm', ['run', '--silent', 'manifest']);
  return [
    ...Object.keys(files),
    'tools/index.ts',
    'docs/areas/README.md',
    `core/db/migrations/${sqlFile}`,
    'mcp-manifest.json',
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const name = process.argv[2];
  try {
    const written = scaffoldArea(ROOT, name);
    process.stdout.write(`Area ${name} scaffolded:\n${written.map((f) => `  ${f}\n`).join('')}`);
  } catch (error) {
    process.stderr.write(`scaffold:area: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
