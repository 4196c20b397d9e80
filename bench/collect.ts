/**
 * Beacon ingestion benchmark (`npm run bench -- collect`): `POST /api/collect` through the real app
 * (`buildApp`), on a fresh in-memory PGlite and on a fresh PostgreSQL database, at saturation (closed
 * loop, autocannon). The issue's floor: ≥ 3,000 beacons/s on PostgreSQL on a 2-core machine (goal
 * 6,000). The targets are interleaved: each round runs every database once, in rotating order, so a
 * noisy moment of the machine falls on both. See bench/README.md ("Collect").
 *
 * The servers run on this process's main thread (as in `ascribe serve`); autocannon runs in a worker
 * thread per target, so it does not share the servers' event loop (it shares the cores).
 */
import { performance } from "node:perf_hooks";
import { type MessagePort, workerData } from "node:worker_threads";
import { sql } from "drizzle-orm";
import pino from "pino";
import { createAccount } from "../src/admin/accounts.ts";
import { rows } from "../src/db/client.ts";
import { COLLECT_LIMITS, COLLECT_PATH } from "../src/ingest/collect-route.ts";
import { beaconFactory, type WorkerInput } from "./collect-mix.ts";
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
// Worker thread: autocannon.

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

interface Options {
  serverUrl: string;
  durationSec: number;
  warmupSec: number;
  rounds: number;
  connections: number;
  adCount: number;
  visitors: number;
}

/** One database under test: its app, its load generator, what it acknowledged. */
interface Target {
  backend: Backend;
  label: string;
  runs: MeasuredRun[];
  /** One warm-up and one measured run, then the database settled. */
  round(round: number): Promise<MeasuredRun | null>;
  /** Every 2xx is a stored touchpoint; stops the app. */
  verify(): Promise<{ accepted: number; stored: number; resolvedToAnAd: number }>;
  close(): Promise<void>;
}

/**
 * A fresh database with one `business` account and its ads, the app serving it, a sanity beacon,
 * and a load-generator worker sending that account's beacons.
 */
async function openTarget(backend: Backend, options: Options): Promise<Target> {
  const logger = pino({ level: "warn" }, process.stderr);
  const opened = await openFresh(backend, options.serverUrl);
  let served: Awaited<ReturnType<typeof serveApp>> | null = null;
  let load: LoadGenerator<RunSpec, LoadResult> | null = null;
  const close = async () => {
    await load?.stop();
    await served?.app.close();
    await served?.audit.close();
    await served?.counters.close();
    await opened.drop();
  };
  try {
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
    served = await serveApp(database, logger, { limits });
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
    const app = served;

    /*
     * This machine's PostgreSQL runs with autovacuum off: after each run the bench does what its
     * ANALYZE would have done by then (the touchpoints grow by tens of thousands of rows a run, past
     * autovacuum's threshold of 50 + 10 %), outside the measured time. Left unanalyzed, the planner
     * takes a table it last saw empty for one still empty. PGlite runs its own passes (embedded
     * maintenance), during the runs as in production.
     */
    const settle = async () => {
      if ("url" in opened && opened.url instanceof URL)
        await onServer(opened.url.toString(), "vacuum analyze");
    };

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
      await settle();
      return {
        round: 0,
        ...result,
        serverEventLoopUtilization: elu.utilization,
        serverBusyUsPerBeacon: result.ok === 0 ? 0 : (elu.active * 1000) / result.ok,
      };
    };

    const runs: MeasuredRun[] = [];
    return {
      backend,
      label: opened.label,
      runs,
      async round(round) {
        await execute(options.warmupSec);
        const measured = await execute(options.durationSec);
        if (measured) {
          measured.round = round;
          runs.push(measured);
        }
        return measured;
      },
      async verify() {
        // Every 2xx is a stored beacon (ids are unique): nothing acknowledged was lost. autocannon
        // stops counting at the end of a run while up to one request per connection is still being written.
        await app.app.close();
        await app.audit.flush();
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
        return { accepted, stored, resolvedToAnAd: written[0]?.resolved ?? 0 };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function summarize(runs: readonly MeasuredRun[]) {
  return {
    beaconsPerSec: median(runs.map((r) => r.beaconsPerSec)),
    p50Ms: median(runs.map((r) => r.latencyMs.p50)),
    p99Ms: median(runs.map((r) => r.latencyMs.p99)),
    serverBusyUsPerBeacon: median(runs.map((r) => r.serverBusyUsPerBeacon)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

/** The targets in round `round`'s order: A B, B A, A B… (rotated, so neither always goes first). */
function rotated<T>(items: readonly T[], round: number): T[] {
  const shift = (round - 1) % Math.max(1, items.length);
  return [...items.slice(shift), ...items.slice(0, shift)];
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
  const options: Options = { serverUrl, durationSec, warmupSec, rounds, connections, adCount, visitors };

  const { totalMemoryGiB: _memory, ...machine } = machineInfo();
  console.log(
    `Ascribe collect bench: node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load ${fmt(machine.loadAverage1m, 2)}`,
  );
  console.log(
    `POST ${COLLECT_PATH}, ${connections} connections, ${rounds} round(s) of ${warmupSec} s warm-up + ${durationSec} s per database, interleaved`,
  );
  const targets: Target[] = [];
  try {
    for (const backend of backends) {
      const target = await openTarget(backend, options);
      targets.push(target);
      console.log(`  ${backend.padEnd(9)} ${target.label}; ${adCount} ads`);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const target of rotated(targets, round)) {
        const m = await target.round(round);
        if (!m) continue;
        console.log(
          `  round ${round}/${rounds} ${target.backend.padEnd(9)} ${pad(fmt(m.beaconsPerSec, 0), 6)} beacons/s  ` +
            `p50 ${fmt(m.latencyMs.p50, 2)} ms  p99 ${fmt(m.latencyMs.p99, 2)} ms  ` +
            `server busy ${fmt(m.serverEventLoopUtilization * 100, 0)}% ` +
            `(${fmt(m.serverBusyUsPerBeacon, 0)} µs/beacon)  non-2xx ${m.non2xx}`,
        );
      }
    }

    const results: Partial<Record<Backend, unknown>> = {};
    const medians: Partial<Record<Backend, ReturnType<typeof summarize>>> = {};
    console.log("");
    console.log(`Medians over ${rounds} round(s):`);
    console.log("  database  beacons/s  p50 ms  p99 ms  µs/beacon  non-2xx");
    for (const target of targets) {
      const checks = await target.verify();
      const summary = summarize(target.runs);
      medians[target.backend] = summary;
      results[target.backend] = { database: target.label, runs: target.runs, medians: summary, checks };
      console.log(
        `  ${target.backend.padEnd(9)} ${pad(fmt(summary.beaconsPerSec, 0), 9)} ${pad(fmt(summary.p50Ms, 2), 7)} ` +
          `${pad(fmt(summary.p99Ms, 2), 7)} ${pad(fmt(summary.serverBusyUsPerBeacon, 0), 10)} ${pad(String(summary.non2xx), 8)}` +
          `   (${checks.stored} touchpoints stored for ${checks.accepted} 2xx answers, ${checks.resolvedToAnAd} resolved to an ad)`,
      );
    }
    // Per round, PostgreSQL over PGlite in the same round; the median of those ratios.
    const byRound = (backend: Backend) =>
      new Map(targets.find((t) => t.backend === backend)?.runs.map((r) => [r.round, r.beaconsPerSec]));
    const pgRounds = byRound("postgres");
    const embeddedRounds = byRound("embedded");
    const ratios = [...pgRounds].flatMap(([round, pg]) => {
      const embedded = embeddedRounds.get(round);
      return embedded ? [pg / embedded] : [];
    });
    if (ratios.length > 0)
      console.log(`  postgres / embedded, median of the rounds' ratios: ${fmt(median(ratios), 2)}×`);

    const value = medians.postgres?.beaconsPerSec;
    const goal =
      value === undefined
        ? null
        : {
            goal: ">= 3000 beacons/s on PostgreSQL (floor), >= 6000 (goal)",
            value,
            floor: value >= 3000,
            pass: value >= 6000,
          };
    if (goal) {
      console.log(
        `  PostgreSQL ${fmt(goal.value, 0)} beacons/s: floor ≥ 3000 ${goal.floor ? "PASS" : "MISS"}, goal ≥ 6000 ${goal.pass ? "PASS" : "MISS"}`,
      );
    }

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
        order: "interleaved: each round runs every database once, the order rotated round by round",
        limits: { production: COLLECT_LIMITS, bench: "raised to 1e9 per minute (one source address)" },
        mix: "80% page views (40% of them ad id, 15% ad name only, 5% unknown ad id, 40% organic/email), 15% form submissions, 5% bookings",
        loadGenerator: "autocannon 8, closed loop, in a worker thread of the same process (one per database)",
        settle:
          "PostgreSQL: VACUUM ANALYZE after each run, outside the measured time (the server's autovacuum is off)",
      },
      results,
      ratios: ratios.length > 0 ? { postgresOverEmbedded: median(ratios), perRound: ratios } : null,
      goal,
    };
    const file = writeResults("collect", timestamp, output);
    console.log(`Results: ${file} (and collect-latest.json)`);
  } finally {
    for (const target of targets) await target.close();
  }
}

runSuite(main, workerMain);
