/**
 * Beacon ingestion benchmark (`npm run bench -- collect`): `POST /api/collect` through the real app
 * (`buildApp`), on a fresh in-memory PGlite and on a fresh PostgreSQL database, at saturation (closed
 * loop, autocannon). The goal: ≥ 3,000 beacons/s on PostgreSQL on a 2-core machine. See
 * bench/README.md ("Collect").
 *
 * The server runs on this process's main thread (as in `ascribe serve`); autocannon runs in a worker
 * thread of the same process, so it does not share the server's event loop (it shares the cores).
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { type MessagePort, workerData } from "node:worker_threads";
import { sql } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { createAccount } from "../src/admin/accounts.ts";
import { rows } from "../src/db/client.ts";
import type { AuditSink } from "../src/http/audit.ts";
import type { CounterStore } from "../src/http/rate-limiter.ts";
import { COLLECT_LIMITS, COLLECT_PATH } from "../src/ingest/collect-route.ts";
import { closedLoop, LoadGenerator, loadKnobs, runSuite, serveApp, serveLoad } from "./load.ts";
import {
  benchServerUrl,
  envInt,
  type FreshDatabase,
  fmt,
  freshPglite,
  freshPostgres,
  machineInfo,
  median,
  onServer,
  pad,
  writeResults,
} from "./support.ts";

// ---------------------------------------------------------------------------------------------------
// Messages between the main thread (server) and the load-generator worker.

/** What the beacons name: the account's client key and its ads (so resolution finds them). */
interface WorkerInput {
  clientKey: string;
  ads: { ad_id: string; ad_name: string; campaign_name: string }[];
  visitors: number;
  seed: number;
}

interface RunSpec {
  url: string;
  durationSec: number;
  connections: number;
}

interface LoadResult {
  responses: number;
  ok: number;
  elapsedSec: number;
  beaconsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  mix: Record<string, number>;
}

// ---------------------------------------------------------------------------------------------------
// Worker thread: the beacon mix and autocannon.

/** mulberry32: a small seeded generator, so every run sends the same mix. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The beacon mix, per 100: 80 page views (32 ad clicks naming a known ad by id, 12 naming one by
 * utm_content only, 4 carrying an unknown ad id, 32 organic or email visits), 15 form submissions with
 * an email (some visitors come back, so some contacts exist already), 5 bookings. Every beacon has a
 * unique `id`, so the number of touchpoints written must equal the number of 2xx answers.
 */
function beaconFactory(input: WorkerInput) {
  const random = prng(input.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const runTag = randomBytes(4).toString("hex");
  let sequence = 0;
  const mix: Record<string, number> = {};
  const count = (kind: string) => {
    mix[kind] = (mix[kind] ?? 0) + 1;
  };
  const next = (): string => {
    sequence += 1;
    const visitor = Math.floor(random() * input.visitors);
    const base = {
      client_key: input.clientKey,
      // 22 characters at least, as the service asks of a beacon id.
      id: `b-${runTag}-${sequence.toString(36).padStart(11, "0")}`,
      visitor_id: `v-${visitor.toString(36).padStart(8, "0")}`,
      session_id: `s-${visitor.toString(36).padStart(6, "0")}-${Math.floor(sequence / 50).toString(36)}`,
    };
    const r = random();
    if (r < 0.8) {
      const ad = pick(input.ads);
      const url = `https://shop.example/landing/${visitor % 17}`;
      const kind = random();
      if (kind < 0.4) {
        count("page_view ad id");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url: `${url}?utm_source=facebook&utm_medium=paid`,
          referrer: "https://l.facebook.com/",
          utm: { source: "facebook", medium: "paid", campaign: ad.campaign_name, content: ad.ad_name },
          ad_ids: { ad_id: ad.ad_id },
          click_ids: { fbclid: `IwAR${sequence.toString(36)}` },
        });
      }
      if (kind < 0.55) {
        count("page_view ad name");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url: `${url}?utm_source=google&utm_medium=cpc`,
          utm: { source: "google", medium: "cpc", campaign: ad.campaign_name, content: ad.ad_name },
          click_ids: { gclid: `Cj0K${sequence.toString(36)}` },
        });
      }
      if (kind < 0.6) {
        count("page_view unknown ad");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url,
          utm: { source: "facebook", medium: "paid", content: "{{ad.name}}" },
          ad_ids: { ad_id: `9${String(sequence).padStart(17, "0")}` },
        });
      }
      count("page_view organic");
      return JSON.stringify(
        random() < 0.5
          ? { type: "page_view", ...base, url, referrer: "https://www.google.com/" }
          : {
              type: "page_view",
              ...base,
              url,
              utm: { source: "newsletter", medium: "email", campaign: "May" },
            },
      );
    }
    const lead = visitor % 5000;
    if (r < 0.95) {
      count("form_submit");
      return JSON.stringify({
        type: "form_submit",
        ...base,
        url: "https://shop.example/apply",
        contact: { email: `lead${lead}@example.com`, first_name: `Lead${lead}` },
        form: { title: pick(["Apply", "Newsletter", "Quote"]) },
      });
    }
    count("booking");
    return JSON.stringify({
      type: "booking",
      ...base,
      url: "https://shop.example/book",
      contact: {
        email: `lead${lead}@example.com`,
        name: `Lead ${lead}`,
        phone: `+3361234${String(lead).padStart(4, "0")}`,
      },
    });
  };
  return { next, mix };
}

function workerMain(port: MessagePort): void {
  const beacons = beaconFactory(workerData as WorkerInput);

  const run = async (spec: RunSpec): Promise<LoadResult> => {
    const mixBefore = { ...beacons.mix };
    const result = await closedLoop(spec, {
      method: "POST",
      path: COLLECT_PATH,
      headers: { "content-type": "text/plain;charset=UTF-8" },
      setupRequest: (req) => ({ ...req, body: beacons.next() }),
    });
    const { p50, p90, p99, max } = result.latencyMs;
    const mix: Record<string, number> = {};
    for (const [kind, n] of Object.entries(beacons.mix)) mix[kind] = n - (mixBefore[kind] ?? 0);
    return {
      responses: result.responses,
      ok: result.ok,
      elapsedSec: result.elapsedSec,
      beaconsPerSec: result.ok / result.elapsedSec,
      latencyMs: { p50, p90, p99, max },
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes: result.statusCodes,
      mix,
    };
  };

  serveLoad(port, run);
}

// ---------------------------------------------------------------------------------------------------
// Main thread.

const BACKENDS = ["embedded", "postgres"] as const;
type Backend = (typeof BACKENDS)[number];

/** A fresh database: in-memory PGlite, or a uniquely named PostgreSQL database dropped after. */
async function openFresh(backend: Backend, serverUrl: string): Promise<FreshDatabase & { label: string }> {
  if (backend === "embedded") return { ...(await freshPglite()), label: "embedded PGlite, in memory" };
  const fresh = await freshPostgres(serverUrl, { statementTimeoutMs: 5_000 });
  return { ...fresh, label: `PostgreSQL ${fresh.url.host}, database ${fresh.name} (dropped after)` };
}

/** ~40 ads over 4 campaigns and 2 platforms, so that resolution by id and by name is real work. */
function benchAds(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const campaign = i % 4;
    const meta = i % 5 !== 4;
    return {
      platform: meta ? "meta" : "google",
      ad_id: meta ? `1202100000000${String(i).padStart(5, "0")}` : `70000${String(i).padStart(6, "0")}`,
      ad_name: `Ad ${i} – ${["Video", "Carousel", "Static", "UGC"][i % 4]}`,
      campaign_id: `cmp-${campaign}`,
      campaign_name: `Campaign ${campaign}`,
      adset_id: `set-${i % 8}`,
      adset_name: `Ad set ${i % 8}`,
    };
  });
}

interface MeasuredRun extends LoadResult {
  round: number;
  /** Main-thread (server, and PGlite when embedded) event-loop utilisation, 0..1. */
  serverEventLoopUtilization: number;
  serverBusyUsPerBeacon: number;
}

async function benchBackend(
  backend: Backend,
  options: {
    serverUrl: string;
    durationSec: number;
    warmupSec: number;
    rounds: number;
    connections: number;
    adCount: number;
    visitors: number;
    /** The round of the suite this call is (its rounds are numbered from it), and how many there are. */
    round?: { first: number; of: number };
  },
) {
  const logger = pino({ level: "warn" }, process.stderr);
  let fresh: (FreshDatabase & { label: string }) | null = null;
  let counters: CounterStore | null = null;
  let audit: AuditSink | null = null;
  let app: FastifyInstance | null = null;
  let load: LoadGenerator<RunSpec, LoadResult> | null = null;
  try {
    const opened = await openFresh(backend, options.serverUrl);
    fresh = opened;
    const database = opened.db;
    const account = await createAccount(database, {
      name: "Bench Company",
      plan: "business",
      timezone: "Europe/Paris",
      currency: "EUR",
      owner: "owner@bench.ascribe.local",
    });
    const accountId = account.id;
    const ads = benchAds(options.adCount);
    await database.admin(accountId, (tx) =>
      tx.execute(sql`
        insert into ads (account_id, platform, ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name)
        select ${accountId}, platform, ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name
        from jsonb_to_recordset(${JSON.stringify(ads)}::jsonb)
          as r(platform text, ad_id text, ad_name text, campaign_id text, campaign_name text, adset_id text,
               adset_name text)`),
    );

    // The load comes from one address: the per-IP limit is raised (through the app's dependencies,
    // as a deployment behind a trusted proxy would), the per-account one too. Nothing else changes.
    const limits = { perIp: 1_000_000_000, perAccount: 1_000_000_000 };
    const served = await serveApp(database, logger, { limits });
    app = served.app;
    counters = served.counters;
    audit = served.audit;
    const siteUrl = served.url;

    const sanity = await fetch(siteUrl + COLLECT_PATH, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({
        type: "page_view",
        client_key: account.client_key,
        id: "sanity-0000000000000001",
        visitor_id: "sanity-visitor",
        url: "https://shop.example/",
        ad_ids: { ad_id: ads[0]?.ad_id },
      }),
    });
    if (sanity.status !== 204)
      throw new Error(`sanity beacon answered ${sanity.status}: ${await sanity.text()}`);
    let accepted = 1;

    load = await LoadGenerator.start<RunSpec, LoadResult>(import.meta.url, {
      clientKey: account.client_key,
      ads: ads.map((a) => ({ ad_id: a.ad_id, ad_name: a.ad_name, campaign_name: a.campaign_name })),
      visitors: options.visitors,
      seed: 20_260_301,
    } satisfies WorkerInput);
    const generator = load;
    const execute = async (seconds: number): Promise<MeasuredRun | null> => {
      if (seconds === 0) return null;
      const before = performance.eventLoopUtilization();
      const result = await generator.run({
        url: siteUrl,
        durationSec: seconds,
        connections: options.connections,
      });
      const elu = performance.eventLoopUtilization(before);
      accepted += result.ok;
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        throw new Error(
          `${backend}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts ` +
            `(status codes ${JSON.stringify(result.statusCodes)}): the figures would be meaningless`,
        );
      }
      return {
        round: 0,
        ...result,
        serverEventLoopUtilization: elu.utilization,
        serverBusyUsPerBeacon: result.ok === 0 ? 0 : (elu.active * 1000) / result.ok,
      };
    };

    console.log("");
    console.log(`${backend}: ${opened.label}; ${options.adCount} ads, ${options.connections} connections`);
    const runs: MeasuredRun[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      await execute(options.warmupSec);
      // This machine's PostgreSQL runs with autovacuum off: after the warm-up the bench does what its
      // ANALYZE would have done by then (outside the measured time). Unanalyzed, the planner takes the
      // touchpoints for the empty table it last saw, and the adoption's UPDATE was measured scanning
      // every anonymous touchpoint of the account. PGlite runs its own passes (embedded maintenance).
      if ("url" in opened && opened.url instanceof URL)
        await onServer(opened.url.toString(), "vacuum analyze");
      const measured = await execute(options.durationSec);
      if (!measured) continue;
      measured.round = (options.round?.first ?? 1) + round - 1;
      runs.push(measured);
      console.log(
        `  round ${measured.round}/${options.round?.of ?? options.rounds} ${pad(fmt(measured.beaconsPerSec, 0), 6)} beacons/s  ` +
          `p50 ${fmt(measured.latencyMs.p50, 2)} ms  p99 ${fmt(measured.latencyMs.p99, 2)} ms  ` +
          `server busy ${fmt(measured.serverEventLoopUtilization * 100, 0)}% ` +
          `(${fmt(measured.serverBusyUsPerBeacon, 0)} µs/beacon)  non-2xx ${measured.non2xx}`,
      );
    }
    // Every 2xx is a stored beacon (ids are unique): nothing acknowledged was lost. autocannon stops
    // counting at the end of a run while up to one request per connection is still being written.
    await app.close();
    app = null;
    await audit.flush();
    const written = await database.admin(accountId, (tx) =>
      rows<{ n: number; resolved: number }>(
        tx,
        sql`select count(*)::int as n, count(*) filter (where resolution <> 'unresolved')::int as resolved
            from touchpoints where account_id = ${accountId}`,
      ),
    );
    const stored = written[0]?.n ?? 0;
    const tail = options.connections * options.rounds * (options.warmupSec > 0 ? 2 : 1);
    if (stored < accepted || stored > accepted + tail) {
      throw new Error(
        `${backend}: ${accepted} beacons answered 2xx but ${stored} touchpoints stored (expected at most ${tail} more)`,
      );
    }
    const summary = {
      beaconsPerSec: median(runs.map((r) => r.beaconsPerSec)),
      p50Ms: median(runs.map((r) => r.latencyMs.p50)),
      p99Ms: median(runs.map((r) => r.latencyMs.p99)),
      serverBusyUsPerBeacon: median(runs.map((r) => r.serverBusyUsPerBeacon)),
      non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    };
    console.log(
      `  median ${fmt(summary.beaconsPerSec, 0)} beacons/s over ${runs.length} round(s); ` +
        `${stored} touchpoints stored for ${accepted} 2xx answers (${written[0]?.resolved ?? 0} resolved to an ad)`,
    );
    return {
      database: opened.label,
      runs,
      medians: summary,
      checks: { accepted, stored, resolvedToAnAd: written[0]?.resolved ?? 0 },
    };
  } finally {
    await load?.stop();
    await app?.close();
    await audit?.close();
    await counters?.close();
    await fresh?.drop();
  }
}

async function main(): Promise<void> {
  const { durationSec, warmupSec, rounds, connections } = loadKnobs(50);
  const adCount = envInt("BENCH_ADS", 40, 1);
  const visitors = envInt("BENCH_VISITORS", 20_000, 1);
  const serverUrl = benchServerUrl();
  const asked = (process.env.BENCH_DATABASES ?? BACKENDS.join(",")).split(",").map((s) => s.trim());
  const unknown = asked.filter((b) => !(BACKENDS as readonly string[]).includes(b));
  if (unknown.length > 0)
    throw new Error(`BENCH_DATABASES: unknown ${unknown.join(", ")} (${BACKENDS.join(", ")})`);
  const backends = BACKENDS.filter((b) => asked.includes(b));

  const { totalMemoryGiB: _memory, ...machine } = machineInfo();
  console.log(
    `Ascribe collect bench: node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load ${fmt(machine.loadAverage1m, 2)}`,
  );
  console.log(
    `POST ${COLLECT_PATH}, ${connections} connections, ${rounds} round(s) of ${warmupSec} s warm-up + ${durationSec} s per database`,
  );
  // Interleaved: each round runs every database in turn, each on a fresh database of its own (two
  // in one process would share the main thread with PGlite's maintenance passes), so noise lasting
  // a while hits both; the figures are medians over the rounds.
  type BackendResult = Awaited<ReturnType<typeof benchBackend>>;
  const perRound: Partial<Record<Backend, BackendResult[]>> = {};
  for (let round = 1; round <= rounds; round++) {
    for (const backend of backends) {
      const result = await benchBackend(backend, {
        serverUrl,
        durationSec,
        warmupSec,
        rounds: 1,
        connections,
        adCount,
        visitors,
        round: { first: round, of: rounds },
      });
      perRound[backend] = [...(perRound[backend] ?? []), result];
    }
  }
  const results: Partial<Record<Backend, Omit<BackendResult, "database"> & { databases: string[] }>> = {};
  for (const backend of backends) {
    const mine = perRound[backend] ?? [];
    const runs = mine.flatMap((r) => r.runs);
    const of = (figure: (r: MeasuredRun) => number) => median(runs.map(figure));
    results[backend] = {
      databases: mine.map((r) => r.database),
      runs,
      medians: {
        beaconsPerSec: of((r) => r.beaconsPerSec),
        p50Ms: of((r) => r.latencyMs.p50),
        p99Ms: of((r) => r.latencyMs.p99),
        serverBusyUsPerBeacon: of((r) => r.serverBusyUsPerBeacon),
        non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
      },
      checks: {
        accepted: mine.reduce((sum, r) => sum + r.checks.accepted, 0),
        stored: mine.reduce((sum, r) => sum + r.checks.stored, 0),
        resolvedToAnAd: mine.reduce((sum, r) => sum + r.checks.resolvedToAnAd, 0),
      },
    };
  }

  const goal = results.postgres
    ? { goal: ">= 3000 beacons/s on PostgreSQL", value: results.postgres.medians.beaconsPerSec }
    : null;
  console.log("");
  for (const backend of backends) {
    console.log(
      `  ${backend.padEnd(9)} ${pad(fmt(results[backend]?.medians.beaconsPerSec ?? 0, 0), 6)} beacons/s (median)`,
    );
  }
  const pg = results.postgres?.medians.beaconsPerSec;
  const embedded = results.embedded?.medians.beaconsPerSec;
  if (pg !== undefined && embedded !== undefined) {
    console.log(`  postgres ÷ embedded ${fmt(pg / embedded, 2)}×`);
  }
  if (goal)
    console.log(
      `  PostgreSQL: floor ≥ 3000 beacons/s ${goal.value >= 3000 ? "PASS" : "MISS"}, goal ≥ 6000 ${goal.value >= 6000 ? "PASS" : "MISS"}`,
    );

  const timestamp = new Date().toISOString();
  const output = {
    benchmark: "collect",
    timestamp,
    machine,
    parameters: {
      durationSec,
      warmupSec,
      rounds,
      connections,
      pipelining: 1,
      ads: adCount,
      visitors,
      limits: { production: COLLECT_LIMITS, bench: "raised to 1e9 per minute (one source address)" },
      mix: "80% page views (40% of them ad id, 15% ad name only, 5% unknown ad id, 40% organic/email), 15% form submissions, 5% bookings",
      loadGenerator: "autocannon 8, closed loop, in a worker thread of the same process",
    },
    results,
    goal: goal ? { ...goal, pass: goal.value >= 3000 } : null,
  };
  const file = writeResults("collect", timestamp, output);
  console.log(`Results: ${file} (and collect-latest.json)`);
}

runSuite(main, workerMain);
