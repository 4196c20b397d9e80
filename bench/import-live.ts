/**
 * Imports on a live service (`npm run bench -- import-live`): the API's read latency while
 * `ascribe import events` runs in the serving process (as `ascribe serve` carries it out for the CLI
 * over its admin socket), on PGlite (on disk) and on PostgreSQL. A worker thread issues reads at a
 * steady rate, on a fixed schedule whatever the answers; the import's events/s is measured at the
 * same time. See bench/README.md, "Imports on a live service".
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import pino from "pino";
import { createAccount } from "../src/admin/accounts.ts";
import { createKey } from "../src/admin/keys.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { type ImportProgress, runImport } from "../src/import/run-import.ts";
import { writeFiles } from "./import-files.ts";
import { serveApp } from "./load.ts";
import {
  benchServerUrl,
  envInt,
  envList,
  type FreshDatabase,
  freshPglite,
  freshPostgres,
  type LatencySummary,
  machineInfo,
  summarize,
  writeResults,
} from "./support.ts";

const BACKENDS = ["pglite", "postgres"] as const;
type Backend = (typeof BACKENDS)[number];
/** `adaptive`: batches sized by their time (the service's import); `fixed`: 5,000 events a batch, as before. */
const MODES = ["fixed", "adaptive"] as const;
type Mode = (typeof MODES)[number];

const GOAL_P99_MS = 200;
const ALONE_SECONDS = 5;
/** The demo's events span the 90 days before this day: every read covers them. */
const WINDOW = "from=2025-10-18&to=2026-01-15";
const PATHS = [`/api/v1/dashboard/kpis?${WINDOW}`, `/api/v1/events?${WINDOW}&limit=50`];

interface ReaderSpec {
  url: string;
  keys: string[];
  rate: number;
}

interface ReaderResult {
  latencies: number[];
  statuses: Record<string, number>;
  /** Requests not answered when the import ended (counted at their age then, in `latencies`). */
  unanswered: number;
}

// ---------------------------------------------------------------------------------------------------
// The reader (worker thread): request i leaves at start + i / rate, answered or not the ones before;
// its latency runs from that scheduled time to the end of its body.

function reader(spec: ReaderSpec): void {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const inFlight = new Map<number, number>();
  const start = performance.now();
  let sent = 0;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    while (start + (sent * 1000) / spec.rate <= now) {
      const i = sent++;
      const scheduled = start + (i * 1000) / spec.rate;
      inFlight.set(i, scheduled);
      const key = spec.keys[i % spec.keys.length] ?? "";
      fetch(`${spec.url}${PATHS[i % PATHS.length]}`, { headers: { authorization: `Bearer ${key}` } })
        .then(async (res) => {
          await res.arrayBuffer();
          return String(res.status);
        })
        .catch((err: unknown) => `error ${(err as Error).message}`)
        .then((status) => {
          if (!inFlight.delete(i)) return;
          latencies.push(performance.now() - scheduled);
          statuses[status] = (statuses[status] ?? 0) + 1;
        });
    }
    setTimeout(tick, 1);
  };
  tick();
  parentPort?.postMessage("ready");
  // Once the import is over no request leaves; those in flight get up to 30 s to be answered.
  parentPort?.once("message", () => {
    stopped = true;
    const finish = () => {
      const now = performance.now();
      for (const scheduled of inFlight.values()) latencies.push(now - scheduled);
      parentPort?.postMessage({ latencies, statuses, unanswered: inFlight.size } satisfies ReaderResult);
    };
    const deadline = performance.now() + 30_000;
    const wait = () => (inFlight.size === 0 || performance.now() > deadline ? finish() : setTimeout(wait, 5));
    wait();
  });
}

/** Starts the reader and resolves once it issues requests (loading the modules takes seconds). */
async function startReader(spec: ReaderSpec): Promise<{ stop(): Promise<ReaderResult> }> {
  // Worker threads do not inherit tsx's loader hooks: register them in the worker, then load this file.
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const worker = new Worker(boot, { eval: true, workerData: spec });
  await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once("message", (result: ReaderResult) => {
          void worker.terminate().then(() => resolve(result));
        });
        worker.once("error", reject);
        worker.postMessage("stop");
      }),
  };
}

// ---------------------------------------------------------------------------------------------------
// One run: a fresh database, the app serving it, the spend file imported, then the events file
// imported while the reader reads.

interface Run {
  backend: Backend;
  mode: Mode;
  events: number;
  importSeconds: number;
  eventsPerSec: number;
  batches: number;
  reads: number;
  unanswered: number;
  statuses: Record<string, number>;
  latency: LatencySummary;
  /** The reads after the import, with nothing else running. */
  alone: LatencySummary;
}

const secrets = createSecretBox([{ id: "bench", key: randomBytes(32) }]);
const silent = pino({ level: "silent" });

async function openFresh(backend: Backend): Promise<FreshDatabase> {
  if (backend === "pglite") return freshPglite("disk");
  // The service's default statement timeout: a batch over it fails.
  return freshPostgres(benchServerUrl(), { statementTimeoutMs: 15_000, prefix: "ascribe_bench_live" });
}

async function measure(
  backend: Backend,
  mode: Mode,
  files: ReturnType<typeof writeFiles>,
  rate: number,
): Promise<Run> {
  const fresh = await openFresh(backend);
  const served = await serveApp(fresh.db, silent);
  try {
    const owner = "owner@bench.ascribe.local";
    const account = await createAccount(fresh.db, {
      name: "Live import",
      plan: "business",
      timezone: "UTC",
      owner,
    });
    const keys: string[] = [];
    // 600 requests a minute per key: enough keys that the rate never meets the limit.
    for (let i = 0; i < Math.ceil((rate * 60) / 300); i++) {
      const created = await createKey(fresh.db, {
        account: account.id,
        as: owner,
        name: `k${i}`,
        scopes: ["*"],
      });
      keys.push(created.key);
    }
    await runImport(fresh.db, secrets, { kind: "spend", account: account.id, file: files.spend });
    const reads = await startReader({ url: served.url, keys, rate });
    let batches = 0;
    const started = performance.now();
    const summary = await runImport(
      fresh.db,
      secrets,
      { kind: "events", account: account.id, file: files.events },
      (_p: ImportProgress) => {
        batches += 1;
      },
      mode === "fixed" ? { batchSize: 5_000 } : {},
    );
    const importSeconds = (performance.now() - started) / 1000;
    const result = await reads.stop();
    // The same reads with no import running, on the imported data: what the reads cost alone.
    const alone = await startReader({ url: served.url, keys, rate });
    await sleep(ALONE_SECONDS * 1000);
    const aloneResult = await alone.stop();
    if (summary.imported !== files.eventCount || summary.errors.length > 0) {
      throw new Error(`import: ${JSON.stringify({ ...summary, errors: summary.errors.slice(0, 3) })}`);
    }
    return {
      backend,
      mode,
      events: files.eventCount,
      importSeconds,
      eventsPerSec: files.eventCount / importSeconds,
      batches,
      reads: result.latencies.length,
      unanswered: result.unanswered,
      statuses: result.statuses,
      latency: summarize(Float64Array.from(result.latencies)),
      alone: summarize(Float64Array.from(aloneResult.latencies)),
    };
  } finally {
    await served.app.close();
    await served.audit.close();
    await served.counters.close();
    await fresh.drop();
  }
}

async function main(): Promise<void> {
  const events = envInt("BENCH_LIVE_EVENTS", 20_000, 100);
  const rate = envInt("BENCH_LIVE_RATE", 10, 1);
  const backends = envList("BENCH_LIVE_BACKENDS", BACKENDS.join(",")) as Backend[];
  const modes = envList("BENCH_LIVE_MODES", MODES.join(",")) as Mode[];
  for (const b of backends) if (!BACKENDS.includes(b)) throw new Error(`unknown backend ${b}`);
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`unknown mode ${m}`);
  const dir = mkdtempSync(join(os.tmpdir(), "ascribe-bench-live-"));
  try {
    // Scale 2 of the demo generator gives about 21,000 events; the file keeps the first `events`.
    const files = writeFiles(dir, { seed: 1, scale: Math.max(1, Math.ceil(events / 10_000)), limit: events });
    console.log(
      `${files.eventCount} events, reads at ${rate}/s alternating ${PATHS.map((p) => p.split("?")[0]).join(" and ")}`,
    );
    const runs: Run[] = [];
    for (const backend of backends) {
      for (const mode of modes) {
        const r = await measure(backend, mode, files, rate);
        runs.push(r);
        const l = r.latency;
        console.log(
          `  ${backend.padEnd(8)} ${mode.padEnd(8)} import ${r.importSeconds.toFixed(1).padStart(5)} s ` +
            `${r.eventsPerSec.toFixed(0).padStart(5)} events/s ${String(r.batches).padStart(4)} batches | ` +
            `${r.reads} reads p50 ${l.p50.toFixed(1)} ms p99 ${l.p99.toFixed(1)} ms max ${l.max.toFixed(1)} ms ` +
            `${JSON.stringify(r.statuses)}${r.unanswered > 0 ? ` (${r.unanswered} unanswered at the end)` : ""}` +
            ` | alone after: p50 ${r.alone.p50.toFixed(1)} ms p99 ${r.alone.p99.toFixed(1)} ms`,
        );
      }
    }
    const goals = runs
      .filter((r) => r.mode === "adaptive")
      .map((r) => ({
        backend: r.backend,
        p99: r.latency.p99,
        // The import's share of the tail: reads during it against the same reads alone after it.
        p99OverAlone: r.latency.p99 / r.alone.p99,
        met: r.latency.p99 < GOAL_P99_MS,
      }));
    for (const g of goals) {
      console.log(
        `  ${g.backend} reads' p99 during the import ${g.p99.toFixed(1)} ms (${g.p99OverAlone.toFixed(2)}× alone)  ` +
          `goal < ${GOAL_P99_MS} ms  ${g.met ? "PASS" : "MISS"}`,
      );
    }
    for (const backend of backends) {
      const fixed = runs.find((r) => r.backend === backend && r.mode === "fixed");
      const adaptive = runs.find((r) => r.backend === backend && r.mode === "adaptive");
      if (!fixed || !adaptive) continue;
      console.log(
        `  ${backend} adaptive ÷ fixed: reads' p99 ${(adaptive.latency.p99 / fixed.latency.p99).toFixed(2)}×, ` +
          `events/s ${(adaptive.eventsPerSec / fixed.eventsPerSec).toFixed(2)}×`,
      );
    }
    const output = {
      suite: "import-live",
      timestamp: new Date().toISOString(),
      machine: machineInfo(),
      parameters: { events: files.eventCount, rate, paths: PATHS, backends, modes },
      runs,
      goals,
    };
    const file = writeResults("import-live", output.timestamp, output);
    console.log(`\nResults: ${file} (and import-live-latest.json)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exitCode = 1;
  });
} else {
  reader(workerData as ReaderSpec);
}
