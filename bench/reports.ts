/**
 * Read latency benchmark (`npm run bench -- reports`): every read route of the registry, through
 * the full pipeline (`app.inject`: key, limits, scope, tenant transaction, barrier, redaction), on
 * the demo data set at several scales, with two demo accounts of the same size in the database so
 * per-tenant filtering is real. Reports: p50 and p99 for a 30-day and a 365-day window. Contacts,
 * calls and journeys: the first page, a deep offset, a search without match, the contact with the
 * longest journey, the call with the longest transcript. On PostgreSQL and on PGlite, and how p50
 * grows from the smallest scale to the largest. See bench/README.md.
 */

import { performance } from "node:perf_hooks";
import type { Readable } from "node:stream";
import { sql } from "drizzle-orm";
import pino from "pino";
import { seedDemo } from "../src/admin/demo.ts";
import { createKey } from "../src/admin/keys.ts";
import { buildApp } from "../src/app.ts";
import { modelNames } from "../src/attribution/models/credit.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { type Database, openEmbedded, openPostgres, rows } from "../src/db/client.ts";
import { createAuditWriter } from "../src/http/audit.ts";
import { createMemoryCounterStore } from "../src/http/rate-limiter.ts";
import { keyStoreFor } from "../src/main.ts";
import { routes } from "../src/routes/index.ts";
import { API_PREFIX } from "../src/routes/route-def.ts";
import { createLocalObjectStore } from "../src/storage/local-store.ts";
import type { ObjectStore } from "../src/storage/object-store.ts";
import {
  benchFiles,
  DEFAULT_SERVER_URL,
  envList,
  type FreshDatabase,
  freshPglite,
  freshPostgres,
  onServer,
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
/** The same for PGlite: the DATA_DIR of `ascribe demo --seed 1` and `--seed 2` runs (one scale). */
const SEEDED_PGLITE_DIR = process.env.BENCH_REPORT_PGLITE_DIR ?? "";
/** The stored files of that database's demo accounts (`DATA_DIR/files` of the `ascribe demo` runs). */
const SEEDED_FILES = process.env.BENCH_REPORT_FILES ?? "";

/** The routes measured: every GET route but the ICP's (or those of BENCH_REPORT_ROUTES). */
const ONLY = envList("BENCH_REPORT_ROUTES", "");
const READ_PATHS = routes
  .filter((r) => r.methods.includes("GET"))
  .map((r) => r.path)
  .filter((p) => !/^\/icp\b/.test(p))
  .filter((p) => ONLY.length === 0 || ONLY.includes(p));

/** One measured request: a route, its query, and the window it asks for (null: none). */
interface Case {
  path: string;
  query: string;
  window_days: number | null;
}

/** What the lookup cases need from the measured account, found once after seeding. */
interface Landmarks {
  /** The measured account's name, and its size: a kept database may hold a partial seed. */
  account: string;
  events: number;
  purchases: number;
  contacts: number;
  calls: number;
  customers: number;
  /** The contact with the most touchpoints. */
  longestJourney: string;
  /** The contact in the most calls. */
  mostCalled: string;
  /** The call with the most transcript segments (it has a recording). */
  longestCall: number;
}

async function findLandmarks(db: FreshDatabase["db"], accountId: string): Promise<Landmarks> {
  return db.admin(accountId, async (tx) => {
    const [found] = await rows<Landmarks>(
      tx,
      sql`select
        (select name from accounts where id = ${accountId}) as account,
        (select count(*)::int from events where account_id = ${accountId}) as events,
        (select count(*)::int from purchases where account_id = ${accountId}) as purchases,
        (select count(*)::int from contacts where account_id = ${accountId}) as contacts,
        (select count(*)::int from calls where account_id = ${accountId} and call_analysis_id is not null) as calls,
        (select count(*)::int from customers where account_id = ${accountId}) as customers,
        (select c.email from touchpoints t join contacts c on c.account_id = t.account_id and c.id = t.contact_id
         where t.account_id = ${accountId} group by c.email order by count(*) desc, c.email limit 1) as "longestJourney",
        (select p.email from calls k cross join unnest(k.participant_emails) as p(email)
         join contacts c on c.account_id = k.account_id and c.email = p.email
         where k.account_id = ${accountId} group by p.email order by count(*) desc, p.email limit 1) as "mostCalled",
        (select artifact_id::float8 from call_transcript_segments where account_id = ${accountId}
         group by artifact_id order by count(*) desc, artifact_id limit 1) as "longestCall"`,
    );
    if (!found) throw new Error("no landmarks");
    return found;
  });
}

/** A deep page: half-way through `total` rows, on a multiple of 100. */
const halfWay = (total: number) => Math.floor(total / 200) * 100;

/**
 * The cases of one route. Windowed reports: a 30-day and a 365-day window ending today. Pages of
 * contacts, calls, journeys and touchpoints: the first, a deep offset, and (where there is a
 * search) a search that matches nothing, which reads every candidate. Per-contact and per-call
 * routes: the largest contact or call of the account.
 */
function casesOf(path: string, takesWindow: boolean, m: Landmarks): Case[] {
  const plain = (query: string) => ({ path, query, window_days: null });
  switch (path) {
    case "/contacts":
      return [plain(""), plain(`offset=${halfWay(m.contacts)}`), plain("search=zz-no-such-contact")];
    case "/journeys":
      return [plain(""), plain(`offset=${halfWay(m.contacts)}`), plain("search=zz-no-such-contact")];
    case "/calls":
      return [plain(""), plain(`offset=${halfWay(m.calls)}`)];
    // Whole lists (streamed) and their pages of the largest size, first and half-way.
    case "/contacts/customers":
      return [plain(""), plain("limit=500"), plain(`limit=500&offset=${halfWay(m.customers)}`)];
    case "/contacts/purchases": {
      const year = `from=${dayOffset(-364)}&to=${dayOffset(0)}`;
      return [
        ...WINDOWS.map((days) => ({
          path,
          query: `from=${dayOffset(-(days - 1))}&to=${dayOffset(0)}`,
          window_days: days,
        })),
        { path, query: `${year}&limit=500`, window_days: 365 },
        { path, query: `${year}&limit=500&offset=1000`, window_days: 365 },
      ];
    }
    case "/touchpoints":
      return [plain(""), plain("offset=100000"), plain("kind=web")];
    // Issue 22's speed goal: every model on 30 days at level=campaign (and last touch per ad).
    case "/attribution/models": {
      const month = `from=${dayOffset(-29)}&to=${dayOffset(0)}`;
      return [
        { path, query: month, window_days: 30 },
        ...modelNames.map((model) => ({
          path,
          query: `${month}&level=campaign&model=${model}`,
          window_days: 30,
        })),
      ];
    }
    case "/contacts/calls":
      return [plain(`email=${encodeURIComponent(m.mostCalled)}`)];
    case "/journeys/contact":
      return [
        plain(`email=${encodeURIComponent(m.longestJourney)}`),
        plain(`email=${encodeURIComponent(m.longestJourney)}&pageviews=1`),
      ];
    case "/calls/transcript":
    case "/calls/recording":
      return [plain(`id=${m.longestCall}`)];
    default:
      return takesWindow
        ? WINDOWS.map((days) => ({
            path,
            query: `from=${dayOffset(-(days - 1))}&to=${dayOffset(0)}`,
            window_days: days,
          }))
        : [plain("")];
  }
}

async function seedTwo(
  db: FreshDatabase["db"],
  scale: number,
  secrets: ReturnType<typeof createSecretBox>,
  files: ObjectStore,
) {
  await seedDemo(db, { seed: 1, scale }, undefined, { secrets });
  // The measured account's calls get their recordings: /calls/recording hands out links to them.
  const demo = await seedDemo(db, { seed: 2, scale }, undefined, { secrets, files });
  return { account_id: demo.account_id };
}

/** `url`: on the PostgreSQL server. */
type BenchDatabase = FreshDatabase & { seeded?: { account_id: string }; url?: URL };

async function openFresh(backend: Backend): Promise<BenchDatabase> {
  if (backend === "pglite" && SEEDED_PGLITE_DIR) return openSeeded(await openEmbedded(SEEDED_PGLITE_DIR));
  // PGlite on disk: a million-event account does not fit PGlite's in-memory WASM heap comfortably.
  if (backend === "pglite") return freshPglite("disk");
  if (!SEEDED_DATABASE) return freshPostgres(serverUrl, { statementTimeoutMs: 600_000 });
  const url = new URL(serverUrl);
  url.pathname = `/${SEEDED_DATABASE}`;
  return { ...(await openSeeded(await openPostgres(url.toString(), 600_000))), url };
}

/**
 * The state a minute after a bulk load in production, which autovacuum brings about: fresh
 * statistics, and the visibility map set, without which every index-only scan reads the heap too.
 * (This machine's PostgreSQL runs with autovacuum off: the bench does what it would have done.)
 */
async function settle(bench: BenchDatabase): Promise<void> {
  if (bench.url) await onServer(bench.url.toString(), "vacuum analyze");
  else await bench.db.maintain({ afterBulkWrite: true });
}

/** A kept database of earlier `ascribe demo` runs: migrated, measured, closed, never dropped. */
async function openSeeded(db: Database): Promise<BenchDatabase> {
  await db.migrate();
  const found = await db.admin(null, (tx) =>
    rows<{ id: string }>(
      tx,
      // Seed 2's account, as in a fresh database; seed 1's when it is the only one.
      sql`select id from accounts where name in ('Demo Company 1', 'Demo Company 2')
          order by name desc, created_at desc limit 1`,
    ),
  );
  const accountId = found[0]?.id;
  if (!accountId) throw new Error("the kept database has no demo account (ascribe demo --seed 1 or 2)");
  return { db, seeded: { account_id: accountId }, drop: () => db.close() };
}

interface RouteFigure {
  backend: Backend;
  scale: number;
  path: string;
  query: string;
  window_days: number | null;
  p50_ms: number;
  p99_ms: number;
  samples: number;
}

/** Reads a response body to its end; its text only when `keep` (an error's), else nothing is joined. */
async function drain(stream: Readable, keep: boolean): Promise<string> {
  const kept: Buffer[] = [];
  for await (const chunk of stream) if (keep) kept.push(Buffer.from(chunk));
  return Buffer.concat(kept).toString();
}

async function measureScale(
  backend: Backend,
  scale: number,
): Promise<{ figures: RouteFigure[]; meta: object }> {
  const fresh = await openFresh(backend);
  const { db } = fresh;
  try {
    const secrets = createSecretBox([{ id: "bench", key: Buffer.alloc(32, 7) }]);
    const files = SEEDED_FILES
      ? createLocalObjectStore({ root: SEEDED_FILES, secrets, siteUrl: () => "http://127.0.0.1" })
      : benchFiles(secrets, () => "http://127.0.0.1");
    const seedStarted = performance.now();
    // Two accounts of the same size: the second is the one measured, the first only has to be there.
    const demo = fresh.seeded ?? (await seedTwo(db, scale, secrets, files));
    const seedSeconds = fresh.seeded ? 0 : (performance.now() - seedStarted) / 1000;
    await settle(fresh);
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
      files,
      siteUrl: () => "http://127.0.0.1",
    });
    await app.ready();
    const landmarks = await findLandmarks(db, demo.account_id);
    console.log(
      `  measured: ${landmarks.account}: ${landmarks.events} events, ${landmarks.contacts} contacts, ` +
        `${landmarks.customers} customers, ${landmarks.purchases} purchases`,
    );
    const figures: RouteFigure[] = [];
    try {
      // Every series (a route, its query) first, with its own key: the per-key rate limit
      // (600/min) would otherwise cap the samples.
      const series: { c: Case; url: string; key: string; samples: number[] }[] = [];
      for (const path of READ_PATHS) {
        const route = routes.find((r) => r.path === path);
        const windowed = route?.input.safeParse({ from: "2026-01-01" });
        const takesWindow = Boolean(windowed?.success && "from" in (windowed.data as object));
        for (const c of casesOf(path, takesWindow, landmarks)) {
          const { key } = await createKey(db, {
            account: demo.account_id,
            as: "owner@demo.ascribe.local",
            name: `bench ${path} ${c.query}`.slice(0, 100),
            scopes: ["*"],
          });
          series.push({ c, url: `${API_PREFIX}${path}${c.query ? `?${c.query}` : ""}`, key, samples: [] });
        }
      }
      // Interleaved: each pass sends one request of every series in turn, so a slow spell of the
      // machine spreads over all routes instead of landing on one; two warm-up passes.
      for (let i = 0; i < SAMPLES + 2; i++) {
        for (const s of series) {
          const started = performance.now();
          // The body read as the chunks the app sends, as a socket would take them: app.inject
          // would otherwise join them into one string, which for a whole list (20 MB) cost the
          // measurement about 115 ms the server does not spend.
          const res = await app.inject({
            method: "GET",
            url: s.url,
            headers: { authorization: `Bearer ${s.key}` },
            payloadAsStream: true,
          });
          const body = await drain(res.stream(), res.statusCode !== 200);
          const ms = performance.now() - started;
          if (res.statusCode !== 200) throw new Error(`${s.url}: ${res.statusCode} ${body.slice(0, 200)}`);
          if (i >= 2) s.samples.push(ms);
        }
      }
      for (const { c, samples } of series) {
        samples.sort((a, b) => a - b);
        const figure = {
          backend,
          scale,
          path: c.path,
          query: c.query,
          window_days: c.window_days,
          p50_ms: round1(percentile(samples, 0.5)),
          p99_ms: round1(percentile(samples, 0.99)),
          samples: samples.length,
        };
        figures.push(figure);
        console.log(
          `  ${c.path.padEnd(24)} ${(c.window_days === null ? c.query : `${c.window_days}d${c.query.replace(/^from=[^&]*&to=[^&]*/, "")}`).slice(0, 36).padEnd(36)}  p50 ${figure.p50_ms.toFixed(1).padStart(8)} ms  p99 ${figure.p99_ms.toFixed(1).padStart(8)} ms`,
        );
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
  const growth: {
    backend: Backend;
    path: string;
    query: string;
    window_days: number | null;
    data_ratio: number;
    p50_ratio: number;
  }[] = [];
  for (const backend of BACKENDS) {
    const scales = SCALES[backend];
    if (scales.length < 2) continue;
    const [small, large] = [Math.min(...scales), Math.max(...scales)];
    for (const f of figures.filter((x) => x.backend === backend && x.scale === large)) {
      const base = figures.find(
        (x) =>
          x.backend === backend &&
          x.scale === small &&
          x.path === f.path &&
          x.window_days === f.window_days &&
          x.query === f.query,
      );
      if (!base) continue;
      growth.push({
        backend,
        path: f.path,
        query: f.query,
        window_days: f.window_days,
        data_ratio: large / small,
        p50_ratio: round1(f.p50_ms / base.p50_ms),
      });
    }
  }
  const steepest = [...growth].sort((a, b) => b.p50_ratio - a.p50_ratio).slice(0, 5);
  if (steepest.length > 0) {
    console.log(
      "\nGrowth, p50 at the largest scale ÷ p50 at the smallest (the data grew ×" +
        `${steepest[0]?.data_ratio}), steepest:`,
    );
    for (const g of steepest) {
      console.log(
        `  ${g.backend} ${g.path}${g.window_days === null ? (g.query ? `?${g.query}` : "") : ` ${g.window_days}d`}  ×${g.p50_ratio}`,
      );
    }
  }
  console.log(
    "\nGoal: p99 ≤ 100 ms (PostgreSQL) / ≤ 300 ms (PGlite) for 30-day windows and every read without one",
  );
  for (const backend of BACKENDS) {
    const limit = backend === "postgres" ? 100 : 300;
    const worst = figures.filter(
      (f) => f.backend === backend && (f.window_days === 30 || f.window_days === null) && f.p99_ms > limit,
    );
    const largest = Math.max(...SCALES[backend]);
    const misses = worst.filter((f) => f.scale === largest);
    console.log(
      `  ${backend} at scale ${largest}: ${misses.length === 0 ? "met" : `missed by ${misses.map((m) => `${m.path}${m.window_days === null && m.query ? `?${m.query}` : ""} (${m.p99_ms} ms)`).join(", ")}`}`,
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
