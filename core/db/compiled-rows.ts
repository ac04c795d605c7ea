// A table's row statements without the query builder's per-request work. The record helper reads
// pages and single rows of every record table through here, and areas insert their hottest rows
// (a lead, an outbox event) the same way: a table's select list and column names are written once,
// each column's decoder and encoder looked up once, an insert's text kept per pattern of given and
// defaulted columns. Per request only what varies is rendered (conditions, order, a total) by
// drizzle's own dialect, so parameters and identifiers are escaped as everywhere else; values are
// encoded and rows decoded by their columns exactly as drizzle's builders do (the same keys in the
// same order, timestamps as Dates, arrays and JSON through the same driver settings). The query
// builder spent as much CPU building and mapping a statement as the database spent running it
// (docs/decisions.md "Compiled row statements"). test/compiled-rows.test.ts holds the two equal.
import { Column, getTableColumns, is, SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable, SelectedFieldsFlat } from 'drizzle-orm/pg-core';
import type { Executor } from './client.ts';
import { dialect } from './dialect.ts';

export interface RowSelect<Row> {
  /** `select <columns> from <table> <tail>`: the rows, decoded as drizzle's select would. */
  rows(db: Executor, tail: SQL): Promise<Row[]>;
  /**
   * The same with one scalar column more, `(<extra>)`, read from the first row: a page and its
   * total in one statement. `extra` is undefined when no row came back.
   */
  rowsWith(db: Executor, extra: SQL, tail: SQL): Promise<{ rows: Row[]; extra: unknown }>;
}

/** The table as SQL text (`"leads"`, schema-qualified when it has one). */
function tableNameOf(table: PgTable): string {
  return dialect.sqlToQuery(sql`${table}`).sql;
}

/** Runs text and parameters on the executor's connection, rows as arrays handed to `map`. */
function execute<T>(
  db: Executor,
  query: { sql: string; params: unknown[] },
  map: (rows: unknown[][]) => T,
): Promise<T> {
  return db._.session
    .prepareQuery<{ execute: T; all: unknown; values: unknown }>(query, undefined, undefined, true, map)
    .execute();
}

interface SelectList<Row> {
  /** `"t"."a", "t"."b", ...` */
  text: string;
  width: number;
  decode(raw: unknown[]): Row;
}

/** The select list of `fields` when each is one of `table`'s own columns; else undefined. */
function selectListOf<Row>(
  table: PgTable,
  tableName: string,
  fields: SelectedFieldsFlat,
): SelectList<Row> | undefined {
  const plan: { key: string; column: Column }[] = [];
  const names: string[] = [];
  for (const [key, field] of Object.entries(fields)) {
    if (!is(field, Column) || field.table !== table) return undefined;
    plan.push({ key, column: field });
    names.push(`${tableName}.${dialect.escapeName(field.name)}`);
  }
  return {
    text: names.join(', '),
    width: plan.length,
    decode(raw) {
      const row: Record<string, unknown> = {};
      let i = 0;
      for (const { key, column } of plan) {
        const value = raw[i++];
        // As drizzle's mapResultRow: SQL NULL stays null, anything else goes through the column.
        row[key] = value === null ? null : column.mapFromDriverValue(value);
      }
      return row as Row;
    },
  };
}

/**
 * The compiled select of `fields` (a flat selection of `table`'s own columns, as a record table's
 * select names them), or undefined when a field is anything else (an expression, another table's
 * column): such a table keeps the query builder.
 */
export function compileRowSelect<Row>(
  table: PgTable,
  fields: SelectedFieldsFlat,
): RowSelect<Row> | undefined {
  const tableName = tableNameOf(table);
  const list = selectListOf<Row>(table, tableName, fields);
  if (!list) return undefined;
  const selectList = sql.raw(list.text);
  const from = sql.raw(tableName);
  return {
    rows: (db, tail) =>
      execute(db, dialect.sqlToQuery(sql`select ${selectList} from ${from} ${tail}`), (raw) =>
        raw.map(list.decode),
      ),
    rowsWith: (db, extra, tail) =>
      execute(db, dialect.sqlToQuery(sql`select ${selectList}, (${extra}) from ${from} ${tail}`), (raw) => ({
        rows: raw.map(list.decode),
        extra: raw[0]?.[list.width],
      })),
  };
}

/** One row's insert: `values` typed by the table, the returned rows (none without a returning list). */
export type RowInsert<Values, Row> = (db: Executor, values: Values) => Promise<Row[]>;

/**
 * The compiled one-row insert into `table`, returning `returning` (its own columns) when given.
 * An omitted column gets what drizzle's insert gives it: its `$defaultFn` value, else its
 * `$onUpdateFn` value when it has no database default, else `default`. A value that is SQL (or
 * that a column encodes to SQL) is rendered by the query builder instead, as is a `returning` of
 * anything but the table's own columns.
 */
export function compileRowInsert<T extends PgTable, Row = never>(
  table: T,
  returning?: SelectedFieldsFlat,
): RowInsert<T['$inferInsert'], Row> {
  const tableName = tableNameOf(table);
  const list = returning ? selectListOf<Row>(table, tableName, returning) : undefined;
  const columns = Object.entries<PgColumn>(getTableColumns(table))
    // Generated columns take no value (drizzle's shouldDisableInsert): `generated always as`.
    .filter(([, column]) => column.generated === undefined || column.generated.type === 'byDefault')
    .map(([key, column]) => ({ key, column }));
  const head = `insert into ${tableName} (${columns.map(({ column }) => dialect.escapeName(column.name)).join(', ')}) values (`;
  const tail = list ? `) returning ${list.text}` : ')';
  // One text per pattern of parameters ('p') and defaults ('d'): a handful per table.
  const texts = new Map<string, string>();

  const built = (db: Executor, values: T['$inferInsert']): PromiseLike<unknown> => {
    const insert = db.insert(table).values(values);
    return returning ? insert.returning(returning) : insert;
  };

  return async (db, values) => {
    const given = values as Record<string, unknown>;
    const params: unknown[] = [];
    let pattern = '';
    for (const { key, column } of columns) {
      let value = given[key];
      if (value === undefined) {
        if (column.defaultFn !== undefined) value = column.defaultFn();
        else if (!column.default && column.onUpdateFn !== undefined) value = column.onUpdateFn();
        else {
          pattern += 'd';
          continue;
        }
      }
      if (is(value, SQL)) return (await built(db, values)) as Row[];
      const encoded = value === null ? null : column.mapToDriverValue(value);
      if (is(encoded, SQL)) return (await built(db, values)) as Row[];
      params.push(encoded);
      pattern += 'p';
    }
    if (returning && !list) return (await built(db, values)) as Row[];
    let text = texts.get(pattern);
    if (text === undefined) {
      let n = 0;
      text = head + [...pattern].map((c) => (c === 'p' ? `$${++n}` : 'default')).join(', ') + tail;
      texts.set(pattern, text);
    }
    return execute(db, { sql: text, params }, (raw) => (list ? raw.map(list.decode) : []));
  };
}
