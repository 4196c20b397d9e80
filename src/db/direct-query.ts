import type { SQL } from "drizzle-orm";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";

/*
 * A raw statement (`rows`) on PostgreSQL sent straight to the pooled client, rather than through
 * drizzle's session, which builds a prepared-query object with two type-parser closures, tracing
 * spans and a cache check for every statement: measured 35 against 26 µs of Node CPU per read of
 * one row under `db.read` (interleaved, in one process). The text and parameters are drizzle's own
 * (`sqlToQuery`), the parsers the same (date and time types kept as text), and a failure is the
 * same `DrizzleQueryError` (statement, parameters, the driver's error as its cause).
 */

const dialect = new PgDialect();

/** The date and time types drizzle keeps as text (timestamp, timestamptz, date, interval and their arrays). */
const TEXT_OIDS = new Set([
  pg.types.builtins.TIMESTAMP,
  pg.types.builtins.TIMESTAMPTZ,
  pg.types.builtins.DATE,
  pg.types.builtins.INTERVAL,
  1231,
  1115,
  1185,
  1187,
  1182,
]);
const asText = (value: string) => value;
/** The parsers of every pooled client (the pool's `types`), so a statement needs no options object. */
export const textDateParsers = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    TEXT_OIDS.has(oid) ? asText : pg.types.getTypeParser(oid, format),
} as pg.CustomTypesConfig;

interface Direct {
  client: pg.PoolClient;
  /** Named statements stay prepared on the connection (not behind a transaction-mode pooler). */
  prepares: boolean;
}

const clients = new WeakMap<object, Direct>();

/**
 * The name of each prepared text, the same on every connection (pg prepares a name once per
 * connection, and refuses one name for two texts). Only texts that do not vary with the data are
 * prepared (`prepare`), so this holds a few dozen entries for the process's life.
 */
const statementNames = new Map<string, string>();

/**
 * Statements of `handle` (a drizzle instance over `client`) may go to `client` directly; with
 * `prepares`, those asked to be prepared are.
 */
export function allowDirect(handle: object, client: pg.PoolClient, prepares: boolean): void {
  clients.set(handle, { client, prepares });
}

/**
 * The rows of `query` run on `handle`'s client; null when the handle has none (PGlite). `prepare`:
 * see `StatementOptions` in client.ts.
 */
export async function directRows<T>(handle: object, query: SQL, prepare = false): Promise<T[] | null> {
  const direct = clients.get(handle);
  if (!direct) return null;
  const { sql: text, params } = dialect.sqlToQuery(query);
  try {
    if (prepare && direct.prepares) {
      let name = statementNames.get(text);
      if (name === undefined) {
        name = `ascribe_${statementNames.size + 1}`;
        statementNames.set(text, name);
      }
      const result = await direct.client.query<T & pg.QueryResultRow>({ name, text, values: params });
      return result.rows;
    }
    // Text and values as arguments: a config object is copied property by property (pg's
    // cloneQueryConfig) on every statement. The parsers are the pool's own (textDateParsers).
    const result = await direct.client.query<T & pg.QueryResultRow>(text, params);
    return result.rows;
  } catch (err) {
    throw new DrizzleQueryError(text, params, err as Error);
  }
}
