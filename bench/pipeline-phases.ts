/**
 * The pipeline suite's phases (bench/pipeline.ts): rounds that run every target in turn, each run
 * checked and timed against the servers' event loop, and the open-loop phase. See bench/README.md.
 */
import { performance } from "node:perf_hooks";
import type { Database } from "../src/db/client.ts";
import type { AuditSink } from "../src/http/audit.ts";
import { RATE_LIMIT } from "../src/http/pipeline.ts";
import type { LoadGenerator } from "./load.ts";
import { type LoadResult, RATE_WINDOW_MS, type RunSpec } from "./pipeline-load.ts";
import { type MeasuredRun, mediansOf, printRun, type TargetMedians } from "./pipeline-summary.ts";
import { APP_TARGETS, type DatabaseKind, TARGETS, type Target } from "./pipeline-targets.ts";

/** Targets of the open-loop phase: all at one rate, so not kpis (a fraction of the others' capacity). */
export const OPEN_TARGETS = TARGETS.filter((t) => t !== "kpis");

/**
 * Waits until the servers have finished what the last run left them: when the load generator stops,
 * up to one request per connection is still being served (50 `/dashboard/kpis` on PGlite: seconds of
 * work), and that work would otherwise land in the next target's run. Settled: a 50 ms slice with the
 * main thread under 30 % busy and, on PostgreSQL, no request holding or waiting for a pooled
 * connection. Returns the milliseconds waited (at most 30 s).
 */
async function settle(db: Database): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 30_000) {
    const before = performance.eventLoopUtilization();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const busy = performance.eventLoopUtilization(before).utilization;
    const pool = db.poolStats?.();
    if (busy < 0.3 && (!pool || (pool.waiting === 0 && pool.idle === pool.total))) break;
  }
  return performance.now() - started;
}

export type Phase = (
  targets: readonly Target[],
  connections: number,
  durationSec: number,
  ratePerSec?: number,
) => Promise<MeasuredRun[]>;

/**
 * Runs phases on one database's servers: `rounds` rounds, each running `targets` in turn (A B C …
 * A B C …), each run after its own warm-up at the same load. A run fails the suite if anything but
 * 2xx comes back (503 from the app excepted: load shed, counted), or a measured run gets no answer
 * at all. After the app's runs the audit writer is flushed, and after every run the servers are let
 * finish what is still in flight (`settle`), so that neither lands in the next target's run.
 */
export function phaseRunner(options: {
  kind: DatabaseKind;
  db: Database;
  generator: LoadGenerator<RunSpec, LoadResult>;
  urls: Record<Target, string>;
  audit: AuditSink;
  rounds: number;
  warmupSec: number;
  /** Requests the app answered before the first run. */
  appResponses: number;
}): { phase: Phase; appResponses(): number } {
  const { kind, db, generator, urls, audit, rounds, warmupSec } = options;
  let appResponses = options.appResponses;

  const execute = async (
    target: Target,
    seconds: number,
    connections: number,
    ratePerSec?: number,
  ): Promise<MeasuredRun | null> => {
    if (seconds === 0) return null;
    const keyed = APP_TARGETS.includes(target);
    const before = performance.eventLoopUtilization();
    const result = await generator.run({
      url: urls[target],
      durationSec: seconds,
      connections,
      ratePerSec,
      trackKeys: keyed,
    });
    const elu = performance.eventLoopUtilization(before);
    if (keyed) {
      appResponses += result.responses;
      await audit.flush();
    }
    const settledMs = await settle(db);
    // A 429 above all (too few keys) would make the figures meaningless.
    const shed = keyed ? (result.statusCodes["503"] ?? 0) : 0;
    if (result.non2xx > shed || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${kind} ${target}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts ` +
          `(status codes ${JSON.stringify(result.statusCodes)}, max ${result.maxPerKeyPerWindow} requests ` +
          `per key per window): the figures would be meaningless`,
      );
    }
    return {
      round: 0,
      target,
      connections,
      ...result,
      shed,
      settledMs,
      serverEventLoopUtilization: elu.utilization,
      serverBusyUsPerRequest: result.responses === 0 ? 0 : (elu.active * 1000) / result.responses,
    };
  };

  const phase: Phase = async (targets, connections, durationSec, ratePerSec) => {
    const runs: MeasuredRun[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) {
        await execute(target, warmupSec, connections, ratePerSec);
        const measured = await execute(target, durationSec, connections, ratePerSec);
        if (!measured) continue;
        if (measured.responses === 0) {
          throw new Error(
            `${kind} ${target} at ${connections} connections: no answer within ${durationSec} s: lengthen BENCH_DURATION`,
          );
        }
        measured.round = round;
        runs.push(measured);
        printRun(measured, rounds);
      }
    }
    return runs;
  };
  return { phase, appResponses: () => appResponses };
}

export interface OpenLoopFigures {
  ratePerSec: number;
  connections: number;
  runs: MeasuredRun[];
  medians: Partial<Record<Target, TargetMedians>>;
  pipelineP99MinusBareMs: number;
  pipelineP99MinusBarePgMs: number;
  pipelineP99MinusDbOnlyMs: number;
  /** Targets the rate came near saturating: their open-loop latencies include queueing. */
  saturatedTargets: Target[];
}

/**
 * Open loop: requests issued on a fixed schedule at `rate` to every /icp/criteria target, below
 * their capacity, so that p99 shows what a request costs rather than the queue (README: "Open loop").
 */
export async function openLoopPhase(
  kind: DatabaseKind,
  phase: Phase,
  options: {
    rate: number;
    keyCount: number;
    connections: number;
    durationSec: number;
    closed: Partial<Record<Target, TargetMedians>>;
  },
): Promise<OpenLoopFigures> {
  const { rate, connections } = options;
  const perKey = Math.ceil((rate * RATE_WINDOW_MS) / 1000 / options.keyCount);
  if (perKey >= RATE_LIMIT) {
    throw new Error(
      `open loop at ${rate} req/s: up to ${perKey} requests per key per window (limit ${RATE_LIMIT}): raise BENCH_KEYS`,
    );
  }
  console.log(`${kind}, open loop at ${rate} req/s, ≤ ${connections} connections:`);
  const runs = await phase(OPEN_TARGETS, connections, options.durationSec, rate);
  const medians = mediansOf(runs, OPEN_TARGETS);
  const saturatedTargets = OPEN_TARGETS.filter((t) => {
    const m = medians[t];
    const capacity = options.closed[t]?.rps ?? 0;
    return !m || m.serverEventLoopUtilization >= 0.9 || m.rps < rate * 0.95 || rate > capacity * 0.9;
  });
  const p99 = (t: Target) => medians[t]?.p99Ms ?? Number.NaN;
  return {
    ratePerSec: rate,
    connections,
    runs,
    medians,
    pipelineP99MinusBareMs: p99("pipeline") - p99("bare"),
    pipelineP99MinusBarePgMs: p99("pipeline") - p99("bare-pg"),
    pipelineP99MinusDbOnlyMs: p99("pipeline") - p99("db-only"),
    saturatedTargets,
  };
}
