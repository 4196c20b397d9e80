/**
 * Report latency benchmark (`npm run bench -- reports`): every read route of the report registry,
 * through the full pipeline (`app.inject`: key, limits, scope, tenant transaction, barrier,
 * redaction), on the demo data set at several scales, with two demo accounts of the same size in
 * the database so per-tenant filtering is real. p50 and p99 per route for a 30-day and a 365-day
 * window, on PostgreSQL and on PGlite, and how p50 grows from the smallest scale to the largest.
 * See bench/README.md.
 */
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import pg from "pg";
import pino from "pino";
import { seedDemo } from "../src/admin/demo.ts";
import { createKey } from "../src/admin/keys.ts";
import { buildApp } from "../src/app.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { openPostgres, rows } from "../src/db/client.ts";
import { createAuditWriter } from "../src/http/audit.ts";
import { createMemoryCounterStore } from "../src/http/rate-limiter.ts";
import { keyStoreFor } from "../src/main.ts";
import { routes } from "../src/routes/index.ts";
import { API_PREFIX } from "../src/routes/route-def.ts";
import {
  benchFiles,
  DEFAULT_SERVER_URL,
  envList,
  type FreshDatabase,
  freshPglite,
  freshPostgres,
  percentile,
  writeResults,
} from "./support.ts";

type Backend = "postgres" | "pglite";

const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
const SAMPLES = Number(process.env.BENCH_REPORT_SAMPLES ?? 40);
const SCALES: Record<Backend, number[]> = {
  postgres: envList("BENCH_REPORT_PG_SCALES", "10,100").map(Number),
  pglite: envList("BENCH_REPORT_PGLITE_SCALES", "10").map(Number),
};
const BACKENDS = envList("BENCH_REPORT_BACKENDS", "postgres,pglite") as Backend[];
const WINDOWS = [30, 365] as const;
/**
 * An existing database on the PostgreSQL server holding the two demo accounts (seeds 1 and 2) of
 * the one scale in BENCH_REPORT_PG_SCALES, e.g. made with `ascribe demo --scale 100` twice: it is
 * migrated, measured and kept, so the code can be measured again without seeding for minutes.
 */
const SEEDED_DATABASE = process.env.BENCH_REPORT_DATABASE ?? "";

/** The report routes: every GET route of the registry except the per-contact lookups (or BENCH_REPORT_ROUTES). */
const ONLY = envList("BENCH_REPORT_ROUTES", "");
const REPORT_PATHS = routes
  .filter((r) => r.methods.includes("GET"))
  .map((r) => r.path)
  .filter((p) => !/^\/(icp|capi|creatives)\b/.test(p))
  .filter((p) => ONLY.length === 0 || ONLY.includes(p));

async function seedTwo(db: FreshDatabase["db"], scale: number, secrets: ReturnType<typeof createSecretBox>) {
  await seedDemo(db, { seed: 1, scale }, undefined, { secrets });
  const demo = await seedDemo(db, { seed: 2, scale }, undefined, { secrets });
  return { account_id: demo.account_id };
}

type BenchDatabase = FreshDatabase & { seeded?: { account_id: string } };

async function openFresh(backend: Backend): Promise<BenchDatabase> {
  // PGlite on disk: a million-event account does not fit PGlite's in-memory WASM heap comfortably.
  if (backend === "pglite") return freshPglite("disk");
  if (!SEEDED_DATABASE) return freshPostgres(serverUrl, { statementTimeoutMs: 600_000 });
  const url = new URL(serverUrl);
  url.pathname = `/${SEEDED_DATABASE}`;
  // As the server's superuser: the accounts table is behind forced row-level security.
  const direct = new pg.Client({ connectionString: url.toString() });
  await direct.connect();
  const found = await direct.query<{ id: string }>(
    "select id from accounts where name = 'Demo Company 2' order by created_at desc limit 1",
  );
  await direct.end();
  const accountId = found.rows[0]?.id;
  if (!accountId) throw new Error(`${SEEDED_DATABASE}: no demo account of seed 2 (ascribe demo --seed 2)`);
  const db = await openPostgres(url.toString(), 600_000);
  await db.migrate();
  return { db, seeded: { account_id: accountId }, drop: () => db.close() };
}

interface RouteFigure {
  backend: Backend;
  scale: number;
  path: string;
  window_days: number | null;
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

async function measureScale(
  backend: Backend,
  scale: number,
): Promise<{ figures: RouteFigure[]; meta: object }> {
  const fresh = await openFresh(backend);
  const { db } = fresh;
  try {
    const secrets = createSecretBox([{ id: "bench", key: Buffer.alloc(32, 7) }]);
    const seedStarted = performance.now();
    // Two accounts of the same size: the second is the one measured, the first only has to be there.
    const demo = fresh.seeded ?? (await seedTwo(db, scale, secrets));
    const seedSeconds = fresh.seeded ? 0 : (performance.now() - seedStarted) / 1000;
    // Fresh statistics, as autovacuum would have them a minute after a bulk load in production.
    await db.admin(null, (tx) => tx.execute(sql`analyze`));
    const eventCount = await db.admin(null, async (tx) => {
      const found = await rows<{ events: number; touchpoints: number }>(
        tx,
        sql`select (select count(*) from events)::int as events,
                                                 (select count(*) from touchpoints)::int as touchpoints`,
      );
      return found[0] ?? { events: 0, touchpoints: 0 };
    });
    console.log(
      `${backend} scale ${scale}: 2 demo accounts, ${eventCount.events} events and ${eventCount.touchpoints} touchpoints in ${seedSeconds.toFixed(0)} s`,
    );

    const logger = pino({ level: "warn" });
    const audit = createAuditWriter(db, logger);
    const app = await buildApp({
      db,
      secrets,
      keys: keyStoreFor(db),
      counters: createMemoryCounterStore(),
      audit,
      logger,
      routes,
      files: benchFiles(secrets, () => "http://127.0.0.1"),
      siteUrl: () => "http://127.0.0.1",
    });
    await app.ready();
    const figures: RouteFigure[] = [];
    try {
      for (const path of REPORT_PATHS) {
        const route = routes.find((r) => r.path === path);
        const windowed = route?.input.safeParse({ from: "2026-01-01" });
        const takesWindow = Boolean(windowed?.success && "from" in (windowed.data as object));
        for (const days of takesWindow ? WINDOWS : [null]) {
          // A key per series: the per-key rate limit (600/min) would otherwise cap the samples.
          const { key } = await createKey(db, {
            account: demo.account_id,
            as: "owner@demo.ascribe.local",
            name: `bench ${path} ${days}`,
            scopes: ["*"],
          });
          const from = days === null ? "" : `?from=${dayOffset(-(days - 1))}&to=${dayOffset(0)}`;
          const url = `${API_PREFIX}${path}${from}`;
          const samples: number[] = [];
          for (let i = 0; i < SAMPLES + 2; i++) {
            const started = performance.now();
            const res = await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${key}` } });
            const ms = performance.now() - started;
            if (res.statusCode !== 200)
              throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
            if (i >= 2) samples.push(ms); // two warm-up requests
          }
          samples.sort((a, b) => a - b);
          const figure = {
            backend,
            scale,
            path,
            window_days: days,
            p50_ms: round1(percentile(samples, 0.5)),
            p99_ms: round1(percentile(samples, 0.99)),
            samples: samples.length,
          };
          figures.push(figure);
          console.log(
            `  ${path.padEnd(24)} ${days === null ? "   -" : `${String(days).padStart(3)}d`}  p50 ${figure.p50_ms.toFixed(1).padStart(8)} ms  p99 ${figure.p99_ms.toFixed(1).padStart(8)} ms`,
          );
        }
      }
    } finally {
      await app.close();
      await audit.close();
    }
    return {
      figures,
      meta: {
        backend,
        scale,
        events: eventCount.events,
        touchpoints: eventCount.touchpoints,
        seed_seconds: round1(seedSeconds),
      },
    };
  } finally {
    await fresh.drop();
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;
function dayOffset(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function main(): Promise<void> {
  const figures: RouteFigure[] = [];
  const seeds: object[] = [];
  for (const backend of BACKENDS) {
    for (const scale of SCALES[backend]) {
      const result = await measureScale(backend, scale);
      figures.push(...result.figures);
      seeds.push(result.meta);
    }
  }

  // Growth: p50 at the largest scale over p50 at the smallest, against the data's growth.
  const growth: object[] = [];
  for (const backend of BACKENDS) {
    const scales = SCALES[backend];
    if (scales.length < 2) continue;
    const [small, large] = [Math.min(...scales), Math.max(...scales)];
    for (const f of figures.filter((x) => x.backend === backend && x.scale === large)) {
      const base = figures.find(
        (x) =>
          x.backend === backend && x.scale === small && x.path === f.path && x.window_days === f.window_days,
      );
      if (!base) continue;
      growth.push({
        backend,
        path: f.path,
        window_days: f.window_days,
        data_ratio: large / small,
        p50_ratio: round1(f.p50_ms / base.p50_ms),
      });
    }
  }
  console.log("\nGoal: p99 ≤ 100 ms (PostgreSQL) / ≤ 300 ms (PGlite) for 30-day windows");
  for (const backend of BACKENDS) {
    const limit = backend === "postgres" ? 100 : 300;
    const worst = figures.filter(
      (f) => f.backend === backend && (f.window_days === 30 || f.window_days === null) && f.p99_ms > limit,
    );
    const largest = Math.max(...SCALES[backend]);
    const misses = worst.filter((f) => f.scale === largest);
    console.log(
      `  ${backend} at scale ${largest}: ${misses.length === 0 ? "met" : `missed by ${misses.map((m) => `${m.path} (${m.p99_ms} ms)`).join(", ")}`}`,
    );
  }

  const timestamp = new Date().toISOString();
  writeResults("reports", timestamp, {
    suite: "reports",
    timestamp,
    samples: SAMPLES,
    seeds,
    figures,
    growth,
  });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
