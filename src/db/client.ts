import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite, type Transaction as PGliteTransaction, types } from "@electric-sql/pglite";
import { type SQL, sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import {
  awaitListeners,
  type ChangeFeed,
  KEY_CHANGE_CHANNEL,
  listenForChanges,
  ownChanges,
} from "./change-feed.ts";
import { allowDirect, directRows, textDateParsers } from "./direct-query.ts";
import { type MaintenanceOptions, maintainEmbedded } from "./embedded-maintenance.ts";
import { isNewDataDir, MIGRATIONS_DIR, shippedTemplate } from "./embedded-template.ts";
import { migratePostgres } from "./postgres-migrations.ts";
import * as schema from "./schema.ts";

/** A drizzle handle (database or transaction) over either driver. */
export type Sql = PgDatabase<PgQueryResultHKT, typeof schema>;

export { MIGRATIONS_DIR };

/** The role requests run as; created by the tenancy migration. */
export const REQUEST_ROLE = "ascribe_app";

export interface Database {
  readonly kind: "embedded" | "postgres";
  /** A request's transaction: the non-owner role, and RLS scoped to one account. */
  tenant<T>(accountId: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * A request that only reads: as `tenant`, but on PostgreSQL without a transaction around it (one
   * round trip sets the context instead of begin, set and commit). Under READ COMMITTED each
   * statement takes its own snapshot either way, so the reads see the same data.
   */
  read<T>(accountId: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Authentication: the request role, seeing only the key whose hash is presented and its account. */
  keyLookup<T>(keyHash: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Ingestion outside the key API: the request role, seeing only the account with this client key. */
  clientKeyLookup<T>(clientKey: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * A page of the application: the request role, seeing only the session whose cookie hash is
   * presented, its user, the user's memberships and those accounts.
   */
  sessionLookup<T>(sessionHash: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Beacons to a first-party host: the request role, seeing only that host's registration. */
  hostLookup<T>(host: string, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Administration (CLI, seeding) as the owner; `accountId` scopes the forced RLS of tenant tables. */
  admin<T>(accountId: string | null, fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Moves on after every administration transaction of this process (key revoked, plan changed…):
   * what was cached about keys and accounts before is stale.
   */
  adminGeneration(): number;
  /** Tells a key cache when what it holds may be stale (see change-feed.ts); opened on first use. */
  keyChanges(): ChangeFeed;
  /**
   * Returns once every serving instance has seen the key and account changes committed so far
   * (`awaitListeners`), so that a revocation answers 401 on the next request at any of them. The
   * embedded database: at once (its one process counts its own administrations).
   */
  keyChangesSeen(): Promise<void>;
  /**
   * Health checks (/readyz): the owner with no account set, so forced RLS hides every tenant row;
   * unlike `admin`, not counted as administration (it would drop the key and session caches).
   */
  probe<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** The connection pool's figures for /metrics; absent on the embedded database (no pool). */
  poolStats?(): { total: number; idle: number; waiting: number };
  migrate(): Promise<void>;
  /**
   * Brings the planner's statistics and the visibility map up to date after bulk writes. PGlite:
   * one pass of the embedded autovacuum rule (every change, `afterBulkWrite`); PostgreSQL: nothing,
   * its autovacuum does it.
   */
  maintain(options?: MaintenanceOptions): Promise<void>;
  close(): Promise<void>;
}

/** How a raw statement is sent. */
export interface StatementOptions {
  /**
   * PostgreSQL keeps the statement prepared on each pooled connection: parsed once, and planned once
   * after five runs where a generic plan costs no more than the custom ones. Only for a text that
   * is the same on every call — lists travel as one array or jsonb value, never as one placeholder
   * per item — run many times a second: the ingest paths' set-based writes, where parsing and
   * planning were a quarter of PostgreSQL's time per batch of beacons, and the point reads (one
   * row by its key), whose plan cannot depend on the tenant's size and whose planning under
   * row-level security cost 3× their execution (35 against 10 µs for /icp/criteria). Not a
   * report: a generic plan could suit one tenant's skew badly. Not behind a transaction-mode
   * pooler (`poolMode`), which hands each transaction any server connection.
   */
  prepare?: boolean;
}

/** Rows of a raw SQL statement, whichever driver runs it (both answer `{ rows }`). */
export async function rows<T>(db: Sql, query: SQL, options: StatementOptions = {}): Promise<T[]> {
  const direct = await directRows<T>(db, query, options.prepare);
  if (direct) return direct;
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

/** What a transaction sets first (SET LOCAL: gone at commit). */
interface Settings {
  /** Run as the request role rather than the owner. */
  asRequestRole: boolean;
  /** False: reads only, run without a transaction where the driver allows it (PostgreSQL). */
  transaction: boolean;
  name: "app.account_id" | "app.key_hash" | "app.session_hash" | "app.client_key" | "app.tracking_host";
  value: string;
}

type Transaction = <T>(settings: Settings, fn: (tx: Sql) => Promise<T>) => Promise<T>;

/** The three kinds of transaction over one way of running a transaction. */
function scoped(run: Transaction) {
  let generation = 0;
  return {
    tenant: <T>(accountId: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: true, name: "app.account_id", value: accountId }, fn),
    read: <T>(accountId: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: false, name: "app.account_id", value: accountId }, fn),
    keyLookup: <T>(keyHash: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: false, name: "app.key_hash", value: keyHash }, fn),
    sessionLookup: <T>(sessionHash: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: true, name: "app.session_hash", value: sessionHash }, fn),
    clientKeyLookup: <T>(clientKey: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: true, name: "app.client_key", value: clientKey }, fn),
    hostLookup: <T>(host: string, fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: true, transaction: true, name: "app.tracking_host", value: host }, fn),
    admin: <T>(accountId: string | null, fn: (tx: Sql) => Promise<T>) =>
      run(
        { asRequestRole: false, transaction: true, name: "app.account_id", value: accountId ?? "" },
        fn,
      ).finally(() => {
        generation += 1;
      }),
    adminGeneration: () => generation,
    probe: <T>(fn: (tx: Sql) => Promise<T>) =>
      run({ asRequestRole: false, transaction: true, name: "app.account_id", value: "" }, fn),
  };
}

/** Connections whose session a query tuned (sessionSetting): the next user resets them first. */
const tunedSessions = new WeakSet<Sql>();
/** Handles running a PostgreSQL read outside any transaction (db.read in the `session` pool mode). */
const outsideTransaction = new WeakSet<Sql>();

/**
 * A planner, memory or time setting for the rest of this request's queries (`work_mem` for a large
 * sort, `enable_sort`, `statement_timeout` for a long maintenance statement). In a transaction, SET
 * LOCAL; in a read without one there is no transaction for SET LOCAL to end, so it is set for the
 * session and the connection's next user resets it (RESET ALL) before anything else runs.
 */
export async function sessionSetting(
  db: Sql,
  name: "work_mem" | "enable_sort" | "statement_timeout" | "random_page_cost",
  value: string,
): Promise<void> {
  const local = !outsideTransaction.has(db);
  if (!local) tunedSessions.add(db);
  await db.execute(sql`select set_config(${name}, ${value}, ${local})`);
}

/** Setting values come from our own keys and ids; anything else is refused before reaching SQL. */
const SETTING_VALUE =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64}|ck_[A-Za-z0-9_-]{1,64}|[a-z0-9.-]{1,253}|)$/i;

/** One literal statement for PGlite's `exec`: a single call instead of a parse/bind/execute round. */
function literalSettings(settings: Settings, local = true): string {
  if (!SETTING_VALUE.test(settings.value)) throw new Error(`refused ${settings.name} value`);
  const role = settings.asRequestRole ? `set_config('role', '${REQUEST_ROLE}', ${local}), ` : "";
  return `select ${role}set_config('${settings.name}', '${settings.value}', ${local})`;
}

/**
 * PostgreSQL's context, sent as one simple query (literal values, checked above): one round trip.
 * RESET ALL first: settings a previous user of the pooled connection set for its session (a read's
 * context, a query's work_mem) never reach this one; it leaves the role alone, which is set or reset
 * explicitly. A read sets its context for the session — there is no transaction for SET LOCAL to
 * end — and the next checkout's RESET ALL undoes it.
 */
function postgresSetup(settings: Settings): string {
  if (!settings.transaction) return `reset all; ${literalSettings(settings, false)}`;
  const role = settings.asRequestRole ? "" : "reset role; ";
  return `begin; reset all; ${role}${literalSettings(settings)}`;
}

/*
 * drizzle's PGlite driver passes its own type parsers (dates and timestamps kept as text) with every
 * query, and PGlite then copies its whole parser table for each result: about 100 µs a query. The
 * same parsers are given to PGlite once, and queries reach it without the option.
 */
const TEXT_PARSERS = Object.fromEntries(
  [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182].map(
    (oid) => [oid, (value: string) => value],
  ),
);

/** How long the embedded database waits between two maintenance passes (see openEmbedded). */
const MAINTENANCE_INTERVAL_MS = 30_000;

/**
 * `dataDir` null keeps the database in memory (tests). `loadDataDir`, a `dumpDataDir` archive, starts
 * from that database instead of an empty one: PGlite's initdb costs seconds of CPU at every open. A
 * data directory without a database starts from `template()`, by default the build's migrated one
 * (embedded-template.ts), when there is one.
 */
export async function openEmbedded(
  dataDir: string | null,
  options: { maintenanceIntervalMs?: number; loadDataDir?: Blob; template?: () => Blob | undefined } = {},
): Promise<Database> {
  let location = "memory://";
  let loadDataDir = options.loadDataDir;
  if (dataDir !== null) {
    location = join(dataDir, "pgdata");
    mkdirSync(location, { recursive: true });
    if (!loadDataDir && isNewDataDir(location)) loadDataDir = (options.template ?? shippedTemplate)();
  }
  const client = await PGlite.create(location, { parsers: TEXT_PARSERS, loadDataDir });
  // PGlite runs one transaction at a time (its own lock spans the callback), so one drizzle handle
  // can forward to whichever transaction is open; outside one, a query is a bug and throws.
  let current: PGliteTransaction | null = null;
  const forwarder = {
    query: (query: string, params?: unknown[], options?: { rowMode?: "array" | "object" }) => {
      if (!current) throw new Error("query outside its transaction");
      return current.query(query, params, options?.rowMode ? { rowMode: options.rowMode } : undefined);
    },
  };
  const handle = drizzlePglite(forwarder as unknown as PGlite) as unknown as Sql;
  const run: Transaction = (settings, fn) =>
    client.transaction(async (tx) => {
      // RESET ALL: what the previous transaction set for the session (a query's work_mem) ends here.
      await tx.exec(`reset all; ${literalSettings(settings)}`);
      current = tx;
      try {
        return await fn(handle);
      } finally {
        current = null;
      }
    });
  // PGlite has no autovacuum (see embedded-maintenance.ts): passes run one after the other, the next
  // one `maintenanceIntervalMs` after the previous ends; `exec` takes PGlite's transaction lock, so a
  // VACUUM runs between transactions, never inside one.
  let pass: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const maintain = (maintenance?: MaintenanceOptions) => {
    // a failed pass is retried next time
    pass = pass.then(() => maintainEmbedded(client, maintenance)).catch(() => {});
    return pass.then(() => {});
  };
  const schedule = (delay = options.maintenanceIntervalMs ?? MAINTENANCE_INTERVAL_MS) => {
    timer = setTimeout(() => void maintain().then(() => closed || schedule()), delay);
    timer.unref();
  };
  // The first pass at once: what an earlier process left unvisited is read from the first request.
  schedule(0);
  const scopes = scoped(run);
  const changes = ownChanges(scopes.adminGeneration);
  return {
    kind: "embedded",
    ...scopes,
    keyChanges: () => changes,
    keyChangesSeen: async () => {},
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_DIR }),
    maintain,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await pass;
      await client.close();
    },
  };
}

/**
 * How the request pool reaches PostgreSQL. `session` (directly, or through a session-mode pooler):
 * reads run without a transaction, their context set for the connection's session, and keys are
 * cached (LISTEN). `transaction` (a transaction-mode pooler such as PgBouncer's, which hands each
 * transaction any server connection): every request is a transaction, nothing is set for a session,
 * and no key is cached — notifications do not come through such a pooler.
 */
export type PoolMode = "session" | "transaction";

/** Client-side bounds on PostgreSQL, for a server that stops answering without closing (frozen). */
export interface PostgresLimits {
  /** Default `session`. */
  poolMode?: PoolMode;
  /** A query without an answer after this long fails and its connection is destroyed; default: the statement timeout + 2 s. */
  queryTimeoutMs?: number;
  /** Waiting for a pooled connection, or for a new one to open, fails after this long; default 5 s. */
  connectTimeoutMs?: number;
}

/** pg's own message when `query_timeout` fires; the connection still waits for that answer. */
const QUERY_TIMEOUT_MESSAGE = "Query read timeout";

function isQueryTimeout(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e.message === QUERY_TIMEOUT_MESSAGE) return true;
  }
  return false;
}

export async function openPostgres(
  url: string,
  statementTimeoutMs: number,
  limits: PostgresLimits = {},
): Promise<Database> {
  const connectTimeoutMs = limits.connectTimeoutMs ?? 5_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // The server cuts a long statement itself and the connection stays usable; a frozen server
    // cuts nothing, so the client gives up a little later on its own.
    statement_timeout: statementTimeoutMs,
    query_timeout: limits.queryTimeoutMs ?? statementTimeoutMs + 2_000,
    connectionTimeoutMillis: connectTimeoutMs,
    // JIT compiles a plan whose estimated cost is high — a report over a large account — and the
    // compilation (1–2 s measured) costs far more than it saves on queries that run in milliseconds.
    options: "-c jit=off",
    types: textDateParsers,
  });
  // A client losing its server (idle in the pool, or checked out between two statements) must not
  // crash the process: its pending query rejects (→ 502) and the pool connects anew next time.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  /*
   * Transactions are run by hand rather than by drizzle's, which hands a client whose connection
   * died back to the pool (and leaks it when BEGIN fails): after an outage every request would
   * then fail or wait forever. Here a client that cannot even roll back is destroyed.
   */
  const handles = new WeakMap<pg.PoolClient, Sql>();
  const poolMode = limits.poolMode ?? "session";
  const handleOf = (client: pg.PoolClient): Sql => {
    let handle = handles.get(client);
    if (!handle) {
      handle = drizzlePg(client, { schema }) as unknown as Sql;
      handles.set(client, handle);
      allowDirect(handle, client, poolMode === "session");
    }
    return handle;
  };
  // The context a read left set for its connection's session: the next read with the same one
  // (the same account, most often) sends nothing before its own queries.
  const sessionContext = new WeakMap<pg.PoolClient, string>();
  const run: Transaction = async (requested, fn) => {
    const settings = poolMode === "transaction" ? { ...requested, transaction: true } : requested;
    const client = await pool.connect();
    const handle = handleOf(client);
    const context = settings.transaction ? null : literalSettings(settings, false);
    let broken: Error | undefined;
    let begun = false;
    try {
      if (context === null || sessionContext.get(client) !== context || tunedSessions.has(handle)) {
        sessionContext.delete(client);
        tunedSessions.delete(handle);
        begun = settings.transaction;
        await client.query(postgresSetup(settings));
        if (context !== null) sessionContext.set(client, context);
      }
      if (context !== null) outsideTransaction.add(handle);
      const result = await fn(handle);
      if (settings.transaction) await client.query("commit");
      return result;
    } catch (err) {
      // A timed-out query is still awaited on its connection: a rollback would queue behind it and
      // wait as long again, and the pool would hand the connection out stuck. It is destroyed.
      if (isQueryTimeout(err)) {
        broken = err as Error;
        throw err;
      }
      if (begun) {
        await client.query("rollback").catch((rollbackError: Error) => {
          broken = rollbackError;
        });
      }
      throw err;
    } finally {
      outsideTransaction.delete(handle);
      client.release(broken);
    }
  };
  const scopes = scoped(run);
  let changes: ChangeFeed | null = null;
  return {
    kind: "postgres",
    ...scopes,
    keyChanges: () => {
      if (changes) return changes;
      if (poolMode === "transaction") {
        changes = { generation: scopes.adminGeneration, trusted: () => false, close: async () => {} };
        return changes;
      }
      const listener = listenForChanges(url, KEY_CHANGE_CHANNEL, { connectTimeoutMs });
      // This process's own administrations count at once; the notification of them comes later.
      changes = { ...listener, generation: () => listener.generation() + scopes.adminGeneration() };
      return changes;
    },
    keyChangesSeen: async () => {
      // Behind a transaction-mode pooler no cache is trusted: every request asks the database.
      if (poolMode === "transaction") return;
      // The change is committed whatever happens here: a wait that fails (the server gone for a
      // moment) only leaves the other instances to see it when its notification reaches them, and
      // must not make the command that made it report a failure.
      await awaitListeners(url, { connectTimeoutMs }).catch(() => undefined);
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    migrate: () => migratePostgres(url, MIGRATIONS_DIR, connectTimeoutMs),
    maintain: async () => {},
    close: async () => {
      await changes?.close();
      await pool.end();
    },
  };
}
