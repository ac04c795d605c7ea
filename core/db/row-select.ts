// A table's row statement without the query builder's per-request work. The record helper reads
// pages and single rows of every record table through here: the select list of a table's columns
// is written once, each column's decoder is looked up once, and a statement's rows are mapped by
// that list. Per request only what varies is rendered (the conditions, the order, a total), by
// drizzle's own dialect, so parameters and identifiers are escaped as everywhere else, and the rows
// come back exactly as drizzle's select of the same columns gives them (same keys in the same
// order, each value decoded by its column: timestamps as Dates, arrays and JSON parsed by the
// driver as drizzle asks it to). The query builder spent as much CPU building and mapping a page
// statement as the database spent running it (docs/decisions.md "Compiled row statements").
import { Column, is, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgTable, type SelectedFieldsFlat } from 'drizzle-orm/pg-core';
import type { Executor } from './client.ts';

/** Renders SQL to text and parameters; it holds no per-query state, so one serves every call. */
const dialect = new PgDialect();

export interface RowSelect<Row> {
  /** `select <columns> from <table> <tail>`: the rows, decoded as drizzle's select would. */
  rows(db: Executor, tail: SQL): Promise<Row[]>;
  /**
   * The same with one scalar column more, `(<extra>)`, read from the first row: a page and its
   * total in one statement. `extra` is undefined when no row came back.
   */
  rowsWith(db: Executor, extra: SQL, tail: SQL): Promise<{ rows: Row[]; extra: unknown }>;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
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
  const keys = Object.keys(fields);
  const plan: { key: string; decoder: Decoder }[] = [];
  const columns: string[] = [];
  const tableName = dialect.sqlToQuery(sql`${table}`).sql;
  for (const key of keys) {
    const field = fields[key];
    if (!is(field, Column) || field.table !== table) return undefined;
    plan.push({ key, decoder: field });
    columns.push(`${tableName}.${dialect.escapeName(field.name)}`);
  }
  const selectList = sql.raw(columns.join(', '));
  const from = sql.raw(tableName);
  const width = keys.length;

  function decode(raw: unknown[]): Row {
    const row: Record<string, unknown> = {};
    let i = 0;
    for (const { key, decoder } of plan) {
      const value = raw[i++];
      // As drizzle's mapResultRow: SQL NULL stays null, anything else goes through the column.
      row[key] = value === null ? null : decoder.mapFromDriverValue(value);
    }
    return row as Row;
  }

  function run<T>(db: Executor, statement: SQL, map: (rows: unknown[][]) => T): Promise<T> {
    return db._.session
      .prepareQuery<{ execute: T; all: unknown; values: unknown }>(
        dialect.sqlToQuery(statement),
        undefined,
        undefined,
        true,
        map,
      )
      .execute();
  }

  return {
    rows: (db, tail) => run(db, sql`select ${selectList} from ${from} ${tail}`, (raw) => raw.map(decode)),
    rowsWith: (db, extra, tail) =>
      run(db, sql`select ${selectList}, (${extra}) from ${from} ${tail}`, (raw) => ({
        rows: raw.map(decode),
        extra: raw[0]?.[width],
      })),
  };
}
