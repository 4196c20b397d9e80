/**
 * The pipeline suite's database and servers (bench/pipeline.ts): a fresh database with the demo
 * account, the real app as `ascribe serve` builds it, and the bare servers it is compared with.
 * See bench/README.md ("Pipeline").
 */
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import Fastify from "fastify";
import type { Logger } from "pino";
import { seedDemo } from "../src/admin/demo.ts";
import { createKey } from "../src/admin/keys.ts";
import { type Database, openPostgres, rows } from "../src/db/client.ts";
import type { AuditSink } from "../src/http/audit.ts";
import { icpCriteria } from "../src/queries/icp-criteria.ts";
import { API_PREFIX } from "../src/routes/route-def.ts";
import { listenAddress, serveApp } from "./load.ts";
import { bareQuery, listen, serveBareHttp } from "./pipeline-bare.ts";
import { type FreshDatabase, freshPglite, freshPostgres, onServer } from "./support.ts";

export const TARGETS = ["bare-http", "bare", "bare-pg", "db-only", "pipeline", "kpis"] as const;
export type Target = (typeof TARGETS)[number];

/** The targets served by the real app: keyed, rate-limited, audited. */
export const APP_TARGETS: readonly Target[] = ["pipeline", "kpis"];

export const TARGET_DESCRIPTION: Record<Target, string> = {
  "bare-http": "node:http server answering the pipeline's /icp/criteria bytes (prepared once), no framework",
  bare: "Fastify route returning the pipeline's /icp/criteria body (serialised per request), no database",
  "bare-pg":
    "Fastify route running the /icp/criteria query bare: PostgreSQL pool.query with the account id bound " +
    "(no transaction, no tenant context); PGlite: the same query on a PGlite of its own, outside a transaction",
  "db-only": "Fastify route running the handler's database work alone: db.read(account) → icpCriteria",
  pipeline: "the real app (buildApp as `ascribe serve` builds it), keyed GET /icp/criteria",
  kpis: "the real app, keyed GET /dashboard/kpis (default window: the last 30 days) on the demo account",
};

export const ICP_PATH = `${API_PREFIX}/icp/criteria`;
export const KPIS_PATH = `${API_PREFIX}/dashboard/kpis`;

export type DatabaseKind = "postgres" | "pglite";

export interface BenchDatabase extends FreshDatabase {
  kind: DatabaseKind;
  label: string;
  /** PostgreSQL: the fresh database's URL. */
  url?: URL;
  accountId: string;
  /** `*` keys of the demo account, the first the demo seed's own. */
  keys: string[];
  seedSeconds: number;
  events: number;
}

/**
 * A fresh, migrated database (PostgreSQL on `serverUrl`, or PGlite in memory) with the demo account
 * at `scale` (seed 1: its ads, contacts, events, rollups and ICP criteria) and `keyCount` `*` keys.
 * PostgreSQL is then vacuumed and analysed, as its autovacuum would after a bulk load (it is off on
 * the bench machine); the demo seed runs the embedded database's pass itself.
 */
export async function openBenchDatabase(
  kind: DatabaseKind,
  options: {
    serverUrl: string;
    scale: number;
    keyCount: number;
    statementTimeoutMs: number;
    /** PostgreSQL: a database on the server already holding `ascribe demo --seed 1`, kept after. */
    kept?: string;
  },
): Promise<BenchDatabase> {
  const started = performance.now();
  const fresh: FreshDatabase & { url?: URL } =
    kind === "postgres"
      ? options.kept
        ? await openKept(options.serverUrl, options.kept, options.statementTimeoutMs)
        : await freshPostgres(options.serverUrl, { statementTimeoutMs: options.statementTimeoutMs })
      : await freshPglite();
  try {
    const db = fresh.db;
    const demo =
      kind === "postgres" && options.kept
        ? await keptDemo(db)
        : await seedDemo(db, { seed: 1, scale: options.scale });
    const url = fresh.url;
    if (url) await onServer(url.toString(), "vacuum analyze");
    const keys = demo.key ? [demo.key] : [];
    while (keys.length < options.keyCount) {
      const created = await createKey(db, {
        account: demo.account_id,
        as: "owner@demo.ascribe.local",
        name: `bench ${keys.length}`,
        scopes: ["*"],
      });
      keys.push(created.key);
    }
    const [counted] = await db.admin(demo.account_id, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from events where account_id = ${demo.account_id}`,
      ),
    );
    return {
      ...fresh,
      kind,
      label:
        kind === "postgres" && url
          ? `PostgreSQL ${url.host}, database ${url.pathname.slice(1)} (${options.kept ? "kept" : "dropped after"})`
          : "PGlite, in memory",
      url,
      accountId: demo.account_id,
      keys,
      seedSeconds: (performance.now() - started) / 1000,
      events: counted?.n ?? 0,
    };
  } catch (err) {
    await fresh.drop();
    throw err;
  }
}

/** A kept database: migrated, measured, closed, never dropped. */
async function openKept(
  serverUrl: string,
  name: string,
  statementTimeoutMs: number,
): Promise<FreshDatabase & { url: URL }> {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), statementTimeoutMs);
  await db.migrate();
  return { db, url, drop: () => db.close() };
}

/** The kept database's demo account (seed 1); its keys' secrets are not stored, so new ones are made. */
async function keptDemo(db: Database): Promise<{ account_id: string; key: string | null }> {
  const found = await db.admin(null, (tx) =>
    rows<{ id: string }>(
      tx,
      sql`select id from accounts where name = 'Demo Company 1' order by created_at limit 1`,
    ),
  );
  const accountId = found[0]?.id;
  if (!accountId) throw new Error("BENCH_PIPELINE_DATABASE holds no demo account (ascribe demo --seed 1)");
  return { account_id: accountId, key: null };
}

export interface ServedTargets {
  urls: Record<Target, string>;
  /** The pipeline's /icp/criteria answer, which every /icp/criteria target answers byte for byte. */
  referenceBody: string;
  kpisBodyBytes: number;
  audit: AuditSink;
  /** Requests the app answered before the first run. */
  appResponses: number;
  close(): Promise<void>;
}

/** Every target listening on 127.0.0.1, answers checked; `close` stops them all. */
export async function serveTargets(bench: BenchDatabase, logger: Logger): Promise<ServedTargets> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const { db, accountId } = bench;
    const served = await serveApp(db, logger);
    closers.push(
      () => served.counters.close(),
      () => served.audit.close(),
      () => served.app.close(),
    );
    const authorization = `Bearer ${bench.keys[0] ?? ""}`;
    const reference = await fetch(served.url + ICP_PATH, { headers: { authorization } });
    const referenceBody = await reference.text();
    if (reference.status !== 200) {
      throw new Error(`the app answered ${reference.status} to ${ICP_PATH}: ${referenceBody}`);
    }
    const body: unknown = JSON.parse(referenceBody);
    const kpis = await fetch(served.url + KPIS_PATH, { headers: { authorization } });
    const kpisBody = await kpis.text();
    if (kpis.status !== 200) throw new Error(`the app answered ${kpis.status} to ${KPIS_PATH}: ${kpisBody}`);

    const bareHttp = await serveBareHttp(Buffer.from(referenceBody));
    closers.push(bareHttp.close);

    const bare = await listen(Fastify(), (app) => app.get(ICP_PATH, async () => body));
    closers.push(() => bare.close());

    const query = await bareQuery(bench);
    closers.push(query.close);
    const barePg = await listen(Fastify(), (app) =>
      app.get(ICP_PATH, async () => ({ data: await query.criteria() })),
    );
    closers.push(() => barePg.close());

    const dbOnly = await listen(Fastify(), (app) =>
      app.get(ICP_PATH, async () => ({ data: await db.read(accountId, (tx) => icpCriteria(tx, accountId)) })),
    );
    closers.push(() => dbOnly.close());

    const urls: Record<Target, string> = {
      "bare-http": bareHttp.url + ICP_PATH,
      bare: listenAddress(bare.server) + ICP_PATH,
      "bare-pg": listenAddress(barePg.server) + ICP_PATH,
      "db-only": listenAddress(dbOnly.server) + ICP_PATH,
      pipeline: served.url + ICP_PATH,
      kpis: served.url + KPIS_PATH,
    };
    // The /icp/criteria targets must serve the same bytes, or the comparison is not of the same work.
    for (const target of TARGETS.filter((t) => t !== "kpis")) {
      const response = await fetch(urls[target], { headers: { authorization } });
      const text = await response.text();
      if (response.status !== 200 || text !== referenceBody) {
        throw new Error(`${target} answered ${response.status} ${text}, expected 200 ${referenceBody}`);
      }
    }
    await warmKeys(urls.pipeline, bench.keys);
    // Their audit rows and last_used_at now, not during the first target's run.
    await served.audit.flush();
    return {
      urls,
      referenceBody,
      kpisBodyBytes: Buffer.byteLength(kpisBody),
      audit: served.audit,
      // the reference requests, the bytes check and the warm-up of the keys
      appResponses: 3 + bench.keys.length,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * One request per key, ten at a time, before anything is measured: a serving process has seen its
 * clients' keys before, so the runs measure the key cache warm, as it is in steady state, rather
 * than one lookup per request while the rotation meets each key the first time (at 30 req/s, a
 * whole run of first meetings).
 */
async function warmKeys(url: string, keys: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`warming the keys: ${url} answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}
