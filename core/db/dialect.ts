// The product's SQL dialect: drizzle's PostgreSQL dialect with a faster rendering of SQL to text and
// parameters. Every statement the product sends is rendered here, from a query builder or a `sql`
// template alike, once per request. drizzle's renderer tests each chunk against up to fifteen
// classes with `is()`, which walks the prototype chain on every miss, and merges a small object per
// chunk; for a list request that was as much CPU as the product's own layers together
// (docs/decisions.md "One renderer for every statement"). This one handles the chunks the product
// writes (text, nested SQL, tables, columns, identifiers, parameters, plain values, value lists)
// with direct class checks into one buffer, and hands anything else (an inlined or placeholder
// parameter, a subquery, a view, an aliased field, an enum, a wrapper, a rendering for indexes) to
// drizzle's own, so the text and parameters are always drizzle's. test/dialect.test.ts holds the
// two equal on every kind of chunk, and the test suite checks every statement it renders against
// drizzle's (verifyRendering, switched on by test/setup/verify-sql.ts).
import { isDeepStrictEqual } from 'node:util';
import { Column, Name, Param, type QueryWithTypings, SQL, StringChunk, Table } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

/** What an encoder (a column, or drizzle's no-op one) types its parameters as (drizzle's prepareTyping). */
type Typing = NonNullable<QueryWithTypings['typings']>[number];

/** The text and parameters being written; `typings` has one entry per parameter, as drizzle's. */
interface Rendering {
  sql: string;
  params: unknown[];
  typings: Typing[];
}

// drizzle's table symbols (Table.Symbol at run time, absent from its type declarations).
const Schema = Symbol.for('drizzle:Schema');
const TableName = Symbol.for('drizzle:Name');
const IsAlias = Symbol.for('drizzle:IsAlias');

/** What the renderer reads of a table through drizzle's symbols. */
interface TableSymbols {
  [Schema]: string | undefined;
  [TableName]: string;
  [IsAlias]: boolean;
}

function symbolsOf(table: Table): TableSymbols {
  return table as unknown as TableSymbols;
}

/** drizzle keeps `.inlineParams()` on the SQL object as a private field. */
function inlinesParams(statement: SQL): boolean {
  return (statement as unknown as { shouldInlineParams: boolean }).shouldInlineParams;
}

let verifying = false;

/**
 * From now on every rendering in this process is also done by drizzle's renderer and must equal it
 * (a mismatch throws with both). For tests: it doubles the rendering work.
 */
export function verifyRendering(on: boolean): void {
  verifying = on;
}

export class FastPgDialect extends PgDialect {
  /** prepareTyping per encoder object: its answer depends only on the encoder's class. */
  readonly #typings = new WeakMap<object, Typing>();

  override sqlToQuery(statement: SQL, invokeSource?: 'indexes'): QueryWithTypings {
    const fast = invokeSource === undefined ? this.#render(statement) : undefined;
    const query = fast ?? super.sqlToQuery(statement, invokeSource);
    if (verifying && fast) {
      const expected = super.sqlToQuery(statement, invokeSource);
      if (!isDeepStrictEqual(fast, expected)) {
        throw new Error(
          `FastPgDialect rendered ${JSON.stringify(fast)} where drizzle renders ${JSON.stringify(expected)}`,
        );
      }
    }
    return query;
  }

  /** The statement as drizzle renders it, or undefined when it holds a chunk left to drizzle. */
  #render(statement: SQL): QueryWithTypings | undefined {
    const out: Rendering = { sql: '', params: [], typings: [] };
    if (!this.#write(out, statement)) return undefined;
    return out.params.length === 0
      ? { sql: out.sql, params: out.params }
      : { sql: out.sql, params: out.params, typings: out.typings };
  }

  /** Writes the chunks of `statement`; false at the first chunk it leaves to drizzle. */
  #write(out: Rendering, statement: SQL): boolean {
    if (inlinesParams(statement)) return false;
    for (const chunk of statement.queryChunks) {
      if (!this.#writeChunk(out, chunk)) return false;
    }
    return true;
  }

  // The branches follow drizzle's SQL.buildQueryFromSourceParams, in its order.
  #writeChunk(out: Rendering, chunk: unknown): boolean {
    if (chunk instanceof StringChunk) {
      const parts = chunk.value;
      out.sql += parts.length === 1 ? parts[0] : parts.join('');
      return true;
    }
    if (chunk instanceof Name) {
      out.sql += this.escapeName(chunk.value);
      return true;
    }
    if (chunk === undefined) return true;
    if (Array.isArray(chunk)) {
      // A value list: `(a, b, c)`.
      out.sql += '(';
      for (let i = 0; i < chunk.length; i++) {
        if (i > 0) out.sql += ', ';
        if (!this.#writeChunk(out, chunk[i])) return false;
      }
      out.sql += ')';
      return true;
    }
    if (chunk instanceof SQL) return this.#write(out, chunk);
    if (chunk instanceof Table) {
      const table = symbolsOf(chunk);
      if (table[IsAlias]) return false;
      const schema = table[Schema];
      const name = this.escapeName(table[TableName]);
      out.sql += schema === undefined ? name : `${this.escapeName(schema)}.${name}`;
      return true;
    }
    if (chunk instanceof Column) {
      // A column named by its key goes through drizzle's casing; the product names every column.
      if (chunk.keyAsName) return false;
      const table = symbolsOf(chunk.table);
      if (table[IsAlias]) return false;
      const schema = table[Schema];
      const qualified = `${this.escapeName(table[TableName])}.${this.escapeName(chunk.name)}`;
      out.sql += schema === undefined ? qualified : `${this.escapeName(schema)}.${qualified}`;
      return true;
    }
    if (chunk instanceof Param) {
      const value: unknown = chunk.value;
      if (value !== null && typeof value === 'object' && !isPlainValue(value)) return false;
      const mapped: unknown = value === null ? null : chunk.encoder.mapToDriverValue(value);
      if (mapped !== null && typeof mapped === 'object' && !isPlainValue(mapped)) return false;
      this.#param(out, mapped, this.#typingOf(chunk.encoder));
      return true;
    }
    if (chunk !== null && (typeof chunk === 'object' || typeof chunk === 'function')) {
      // A placeholder, a subquery, a view, an aliased field, an enum, a query builder: drizzle's.
      if (typeof chunk === 'function' || !isPlainValue(chunk)) return false;
    }
    this.#param(out, chunk, 'none');
    return true;
  }

  #param(out: Rendering, value: unknown, typing: Typing): void {
    out.params.push(value);
    out.typings.push(typing);
    out.sql += this.escapeParam(out.params.length - 1);
  }

  #typingOf(encoder: object): Typing {
    let typing = this.#typings.get(encoder);
    if (typing === undefined) {
      typing = this.prepareTyping(encoder as Parameters<PgDialect['prepareTyping']>[0]);
      this.#typings.set(encoder, typing);
    }
    return typing;
  }
}

/**
 * An object drizzle binds as a parameter as it is: not one of its entities (a placeholder, a
 * subquery, SQL returned by an encoder) nor anything with a `getSQL` (a query builder). A Date, a
 * Buffer, an array of values, a JSON object.
 */
function isPlainValue(value: object): boolean {
  if (value instanceof Date) return true;
  if (typeof (value as { getSQL?: unknown }).getSQL === 'function') return false;
  const type = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
  if (type === null || type === Object.prototype || type === Array.prototype) return true;
  // Every drizzle entity class (SQL, Placeholder, Subquery, a column...) carries its kind.
  return !hasEntityKind(type.constructor);
}

const entityKind = Symbol.for('drizzle:entityKind');

function hasEntityKind(type: unknown): boolean {
  return typeof type === 'function' && entityKind in type;
}

/**
 * The one dialect of every database handle, transaction and compiled statement (core/db/client.ts,
 * core/db/compiled-rows.ts). No casing: the schema names every column. It keeps no per-query state.
 */
export const dialect = new FastPgDialect();
