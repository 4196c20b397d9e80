/**
 * Request-path benchmark (`npm run bench -- pipeline`), on PostgreSQL and on PGlite: the keyed
 * `GET /api/v1/icp/criteria` through the real app, against a bare `node:http` server and a bare
 * Fastify route answering the same bytes, the same query run bare on the driver, and the handler's
 * database work alone; and the keyed `/dashboard/kpis` on the demo account. Closed loop at 10 and 50
 * connections (optionally an open loop at a fixed rate), every round running the targets in turn;
 * medians over rounds, and the ratios of the issue's Goals table. See bench/README.md ("Pipeline").
 *
 * The servers run on this process's main thread (as in `ascribe serve`); the load generator runs in a
 * worker thread of the same process (pipeline-load.ts), so it does not share the servers' event loop.
 */
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import pino from "pino";
import { rows } from "../src/db/client.ts";
import { RATE_LIMIT } from "../src/http/pipeline.ts";
import { LoadGenerator, runSuite } from "./load.ts";
import { type LoadResult, pipelineWorker, type RunSpec, type WorkerInput } from "./pipeline-load.ts";
import { type OpenLoopFigures, openLoopPhase, phaseRunner } from "./pipeline-phases.ts";
import {
  type Goal,
  goalsOf,
  type LevelFigures,
  type MeasuredRun,
  mediansOf,
  printDatabaseSummary,
  printGoals,
  ratiosOf,
} from "./pipeline-summary.ts";
import {
  type BenchDatabase,
  type DatabaseKind,
  ICP_PATH,
  KPIS_PATH,
  openBenchDatabase,
  serveTargets,
  TARGET_DESCRIPTION,
  TARGETS,
} from "./pipeline-targets.ts";
import { benchServerUrl, envInt, envList, fmt, machineInfo, writeResults } from "./support.ts";

/** The connection counts the Goals table names: its ratios at the first, its kpis p99 at the second. */
const RATIO_LEVEL = 10;
const KPIS_LEVEL = 50;

/**
 * Seconds measured per run, per connection count: BENCH_DURATION is one number for every count, or a
 * list with one per count of BENCH_CONNECTIONS; default 3 s at the first count, 2 s at the others.
 */
function durations(levelCount: number): number[] {
  const listed = envList("BENCH_DURATION", "").map((raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`BENCH_DURATION: ${raw} is not a whole number of seconds ≥ 1`);
    return n;
  });
  if (listed.length > 1 && listed.length !== levelCount) {
    throw new Error(`BENCH_DURATION lists ${listed.length} durations for ${levelCount} connection counts`);
  }
  return Array.from(
    { length: levelCount },
    (_, i) => listed[listed.length === 1 ? 0 : i] ?? (i === 0 ? 3 : 2),
  );
}

function knobs() {
  const databases = envList("BENCH_DATABASES", "postgres,pglite").map((name) =>
    name === "embedded" ? "pglite" : name,
  );
  for (const name of databases) {
    if (name !== "postgres" && name !== "pglite")
      throw new Error(`BENCH_DATABASES: unknown ${name} (postgres, pglite)`);
  }
  const levels = envList("BENCH_CONNECTIONS", `${RATIO_LEVEL},${KPIS_LEVEL}`).map((raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CONNECTIONS: ${raw} is not a connection count`);
    return n;
  });
  const rate = process.env.BENCH_LATENCY_RATE ?? "";
  if (rate !== "" && rate !== "auto" && !(Number.isInteger(Number(rate)) && Number(rate) > 0)) {
    throw new Error(
      `BENCH_LATENCY_RATE must be "auto" or a whole number of requests per second, got ${rate}`,
    );
  }
  return {
    databases: databases as DatabaseKind[],
    levels,
    durationsSec: durations(levels.length),
    warmupSec: envInt("BENCH_WARMUP", 1, 0),
    rounds: envInt("BENCH_ROUNDS", 3, 1),
    // Round robin over enough keys that none exceeds the per-key limit in a window: 1000 keys carry
    // 1000 × 600 / 60 = 10,000 req/s sustained for a whole minute.
    keyCount: envInt("BENCH_KEYS", 1000, 1),
    scale: { postgres: envInt("BENCH_SCALE", 10, 1), pglite: envInt("BENCH_PGLITE_SCALE", 1, 1) },
    /** Open-loop phase: none (unset), at half the pipeline's throughput ("auto"), or at this rate. */
    latencyRate: rate === "" ? null : rate === "auto" ? ("auto" as const) : Number(rate),
    serverUrl: benchServerUrl(),
    /** A database on that server holding `ascribe demo --seed 1`, measured and kept (no seeding). */
    keptDatabase: process.env.BENCH_PIPELINE_DATABASE || undefined,
  };
}
type Knobs = ReturnType<typeof knobs>;

/** What tells the run was not fooled: keys under the limit, audit rows written, load shed. */
async function checksOf(bench: BenchDatabase, runs: MeasuredRun[], appResponses: number) {
  const audited = await bench.db.admin(bench.accountId, (tx) =>
    rows<{ n: number }>(
      tx,
      sql`select count(*)::int as n from audit_log where account_id = ${bench.accountId}`,
    ),
  );
  const checks = {
    maxPerKeyPerWindow: Math.max(0, ...runs.map((r) => r.maxPerKeyPerWindow)),
    auditRowsWritten: audited[0]?.n ?? 0,
    appResponses,
    shed: runs.reduce((sum, r) => sum + r.shed, 0),
  };
  console.log(
    `  checks: only 2xx${checks.shed > 0 ? ` and ${checks.shed} 503 (shed)` : ""} in every run (warm-ups included); ` +
      `max ${checks.maxPerKeyPerWindow} requests per key per rate-limit window (limit ${RATE_LIMIT}); ` +
      `${checks.auditRowsWritten} audit rows written for ${checks.appResponses} app responses`,
  );
  return checks;
}

async function benchDatabase(kind: DatabaseKind, k: Knobs) {
  const logger = pino({ level: "warn" }, process.stderr);
  const bench: BenchDatabase = await openBenchDatabase(kind, {
    serverUrl: k.serverUrl,
    scale: k.scale[kind],
    keyCount: k.keyCount,
    statementTimeoutMs: 600_000,
    kept: k.keptDatabase,
  });
  let served: Awaited<ReturnType<typeof serveTargets>> | null = null;
  let load: LoadGenerator<RunSpec, LoadResult> | null = null;
  try {
    console.log("");
    console.log(
      `${kind}: ${bench.label}; demo account ${kind === "postgres" && k.keptDatabase ? "as kept" : `at scale ${k.scale[kind]}`} (${bench.events} events), ` +
        `${bench.keys.length} keys, seeded in ${fmt(bench.seedSeconds, 0)} s`,
    );
    served = await serveTargets(bench, logger);
    load = await LoadGenerator.start<RunSpec, LoadResult>(import.meta.url, {
      keys: bench.keys,
    } satisfies WorkerInput);
    const runner = phaseRunner({
      kind,
      db: bench.db,
      generator: load,
      ...served,
      rounds: k.rounds,
      warmupSec: k.warmupSec,
    });

    const levels: LevelFigures[] = [];
    for (const [i, connections] of k.levels.entries()) {
      const durationSec = k.durationsSec[i] ?? 1;
      console.log(
        `${kind}, closed loop, ${connections} connections, ${k.warmupSec} s warm-up + ${durationSec} s per run:`,
      );
      const phaseStarted = performance.now();
      const runs = await runner.phase(TARGETS, connections, durationSec);
      const medians = mediansOf(runs, TARGETS);
      const seconds = (performance.now() - phaseStarted) / 1000;
      console.log(`  (${fmt(seconds, 0)} s)`);
      levels.push({ connections, durationSec, seconds, runs, medians, ratios: ratiosOf(medians) });
    }
    let open: OpenLoopFigures | null = null;
    if (k.latencyRate !== null) {
      // "auto": half the pipeline's throughput at the first connection count, a multiple of 10.
      const pipelineRps = levels[0]?.medians.pipeline?.rps ?? 0;
      const rate =
        k.latencyRate === "auto" ? Math.max(10, Math.floor((pipelineRps * 0.5) / 10) * 10) : k.latencyRate;
      open = await openLoopPhase(kind, runner.phase, {
        rate,
        keyCount: k.keyCount,
        connections: k.levels[0] ?? RATIO_LEVEL,
        durationSec: k.durationsSec[0] ?? 1,
        closed: levels[0]?.medians ?? {},
      });
    }

    const runs = [...levels.flatMap((l) => l.runs), ...(open?.runs ?? [])];
    const checks = await checksOf(bench, runs, runner.appResponses());
    return {
      database: bench.label,
      scale: kind === "postgres" && k.keptDatabase ? null : k.scale[kind],
      events: bench.events,
      keys: bench.keys.length,
      seedSeconds: bench.seedSeconds,
      icpBodyBytes: Buffer.byteLength(served.referenceBody),
      kpisBodyBytes: served.kpisBodyBytes,
      closedLoop: levels,
      openLoop: open,
      checks,
    };
  } finally {
    await load?.stop();
    await served?.close();
    await bench.drop();
  }
}

async function main(): Promise<void> {
  const k = knobs();
  const machine = machineInfo();
  const started = performance.now();
  console.log(
    `Ascribe pipeline bench: node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load ${fmt(machine.loadAverage1m, 2)}`,
  );
  console.log(
    `${k.databases.join(", ")}; closed loop at ${k.levels.join(" and ")} connections` +
      `${k.latencyRate === null ? "" : `, open loop at ${k.latencyRate === "auto" ? "half the pipeline's throughput" : `${k.latencyRate} req/s`}`}; ` +
      `${k.rounds} round(s) of ${k.warmupSec} s warm-up + ${k.durationsSec.join(" / ")} s per target; targets ${TARGETS.join(", ")}`,
  );
  const results: Partial<Record<DatabaseKind, Awaited<ReturnType<typeof benchDatabase>>>> = {};
  for (const kind of k.databases) results[kind] = await benchDatabase(kind, k);

  // --- Summary -------------------------------------------------------------------------------------
  const goals: Partial<Record<DatabaseKind, Goal[]>> = {};
  for (const kind of k.databases) {
    const r = results[kind];
    if (!r) continue;
    printDatabaseSummary(kind, r, k.rounds);
    goals[kind] = goalsOf(
      new Map(r.closedLoop.map((l) => [l.connections, l.ratios] as const)),
      RATIO_LEVEL,
      KPIS_LEVEL,
    );
  }
  console.log("");
  console.log("Goals (issue 20: PostgreSQL; PGlite for comparison, no goal beyond not worse):");
  for (const kind of k.databases) {
    const mine = goals[kind];
    if (!mine) continue;
    console.log(`  ${kind}:`);
    printGoals(mine);
  }
  const totalSeconds = (performance.now() - started) / 1000;
  console.log(`  (whole run ${fmt(totalSeconds / 60, 1)} min)`);

  const timestamp = new Date().toISOString();
  const file = writeResults("pipeline", timestamp, {
    benchmark: "pipeline",
    timestamp,
    machine,
    parameters: {
      databases: k.databases,
      connections: k.levels,
      durationSec: Object.fromEntries(k.levels.map((c, i) => [c, k.durationsSec[i]])),
      warmupSec: k.warmupSec,
      rounds: k.rounds,
      order: "every round runs the targets in turn, each with its own warm-up",
      pipelining: 1,
      keys: k.keyCount,
      rateLimitPerKeyPerMinute: RATE_LIMIT,
      scale: k.scale,
      latencyRatePerSec: k.latencyRate,
      paths: { icp: ICP_PATH, kpis: KPIS_PATH },
      loadGenerator:
        "worker thread of the same process (servers on the main thread): autocannon 8 (closed loop); " +
        "node:http keep-alive agent issuing requests on a fixed schedule (open loop)",
    },
    targets: TARGET_DESCRIPTION,
    results,
    goals,
    totalSeconds,
  });
  console.log("");
  console.log(`Results: ${file} (and pipeline-latest.json)`);
}

runSuite(main, pipelineWorker);
