/**
 * The pipeline suite's figures (bench/pipeline.ts): medians over rounds per target, the ratios and
 * differences the issue's goals are stated in, and their printing. See bench/README.md ("Pipeline").
 */
import type { LoadResult } from "./pipeline-load.ts";
import { OPEN_TARGETS, type OpenLoopFigures } from "./pipeline-phases.ts";
import { type DatabaseKind, TARGETS, type Target } from "./pipeline-targets.ts";
import { fmt, median, pad } from "./support.ts";

export interface MeasuredRun extends LoadResult {
  round: number;
  target: Target;
  connections: number;
  /** Main-thread (servers + PGlite) event-loop utilisation during the run, 0..1. */
  serverEventLoopUtilization: number;
  /** Main-thread busy time per response, µs: the servers' CPU cost of one request. */
  serverBusyUsPerRequest: number;
  /** 503 answers (the app shedding load), counted apart from the 2xx in `rps`. */
  shed: number;
  /** How long the servers took after the run to finish the requests still in flight. */
  settledMs: number;
}

export interface TargetMedians {
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  serverBusyUsPerRequest: number;
  serverEventLoopUtilization: number;
  maxInFlight: number;
  /** Sums over the rounds. */
  non2xx: number;
  shed: number;
}

/** Medians over the rounds, each figure taken separately. */
export function mediansOf(
  runs: MeasuredRun[],
  targets: readonly Target[],
): Partial<Record<Target, TargetMedians>> {
  const out: Partial<Record<Target, TargetMedians>> = {};
  for (const target of targets) {
    const mine = runs.filter((r) => r.target === target);
    if (mine.length === 0) continue;
    const of = (figure: (r: MeasuredRun) => number) => median(mine.map(figure));
    out[target] = {
      rps: of((r) => r.rps),
      p50Ms: of((r) => r.latencyMs.p50),
      p90Ms: of((r) => r.latencyMs.p90),
      p99Ms: of((r) => r.latencyMs.p99),
      serverBusyUsPerRequest: of((r) => r.serverBusyUsPerRequest),
      serverEventLoopUtilization: of((r) => r.serverEventLoopUtilization),
      maxInFlight: Math.max(0, ...mine.map((r) => r.openLoop?.maxInFlight ?? 0)),
      non2xx: mine.reduce((sum, r) => sum + r.non2xx, 0),
      shed: mine.reduce((sum, r) => sum + r.shed, 0),
    };
  }
  return out;
}

/** The closed-loop comparisons at one connection count, from the medians (NaN where a target did not run). */
export function ratiosOf(m: Partial<Record<Target, TargetMedians>>) {
  const rps = (t: Target) => m[t]?.rps ?? Number.NaN;
  const p99 = (t: Target) => m[t]?.p99Ms ?? Number.NaN;
  return {
    pipelineOverBarePg: rps("pipeline") / rps("bare-pg"),
    pipelineOverBare: rps("pipeline") / rps("bare"),
    pipelineOverBareHttp: rps("pipeline") / rps("bare-http"),
    pipelineOverDbOnly: rps("pipeline") / rps("db-only"),
    dbOnlyOverBarePg: rps("db-only") / rps("bare-pg"),
    barePgOverBare: rps("bare-pg") / rps("bare"),
    bareOverBareHttp: rps("bare") / rps("bare-http"),
    kpisP99Ms: p99("kpis"),
    kpisP99MinusBareMs: p99("kpis") - p99("bare"),
    pipelineP99MinusBareMs: p99("pipeline") - p99("bare"),
  };
}
export type Ratios = ReturnType<typeof ratiosOf>;

/** One connection count's closed-loop phase on one database. */
export interface LevelFigures {
  connections: number;
  durationSec: number;
  /** Wall time of the phase, warm-ups included. */
  seconds: number;
  runs: MeasuredRun[];
  medians: Partial<Record<Target, TargetMedians>>;
  ratios: Ratios;
}

/** A goal of the issue's table: a floor the issue must meet, and the goal beyond it. */
export interface Goal {
  figure: string;
  connections: number;
  value: number;
  floor: number;
  goal: number;
  higherIsBetter: boolean;
  verdict: "GOAL" | "FLOOR" | "MISS" | "NOT RUN";
}

function judge(
  figure: string,
  connections: number,
  value: number,
  floor: number,
  goal: number,
  higher: boolean,
): Goal {
  const meets = (bound: number) => (higher ? value >= bound : value <= bound);
  const verdict = Number.isNaN(value) ? "NOT RUN" : meets(goal) ? "GOAL" : meets(floor) ? "FLOOR" : "MISS";
  return { figure, connections, value, floor, goal, higherIsBetter: higher, verdict };
}

/**
 * The Goals table's request-path rows (PostgreSQL): the two throughput ratios at `ratioLevel`
 * connections, `/dashboard/kpis` p99 added over bare Fastify at `kpisLevel` connections.
 */
export function goalsOf(byLevel: Map<number, Ratios>, ratioLevel: number, kpisLevel: number): Goal[] {
  const at = byLevel.get(ratioLevel);
  const high = byLevel.get(kpisLevel);
  return [
    judge(
      "keyed /icp/criteria ÷ bare-pg (req/s)",
      ratioLevel,
      at?.pipelineOverBarePg ?? Number.NaN,
      0.7,
      0.8,
      true,
    ),
    judge(
      "keyed /icp/criteria ÷ bare Fastify (req/s)",
      ratioLevel,
      at?.pipelineOverBare ?? Number.NaN,
      0.15,
      0.25,
      true,
    ),
    judge(
      "/dashboard/kpis p99 − bare p99 (ms)",
      kpisLevel,
      high?.kpisP99MinusBareMs ?? Number.NaN,
      250,
      100,
      false,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------------
// Printing.

const percent = (ratio: number) => `${fmt(ratio * 100, 1)}%`;
const signedMs = (ms: number) => `${ms >= 0 ? "+" : ""}${fmt(ms, 2)} ms`;

export function printRun(run: MeasuredRun, rounds: number): void {
  const open = run.openLoop;
  console.log(
    `  round ${run.round}/${rounds} ${run.target.padEnd(9)} ${pad(fmt(run.rps, 0), 7)} req/s  ` +
      `p50 ${fmt(run.latencyMs.p50, 2)} ms  p99 ${fmt(run.latencyMs.p99, 2)} ms  ` +
      `server busy ${fmt(run.serverEventLoopUtilization * 100, 0)}% (${fmt(run.serverBusyUsPerRequest, 0)} µs/req)  ` +
      (open ? `in flight ≤ ${open.maxInFlight}  lag p99 ${fmt(open.dispatchLagP99Ms, 2)} ms  ` : "") +
      `non-2xx ${run.non2xx}${run.shed > 0 ? ` (${run.shed} shed: 503)` : ""}` +
      (run.settledMs >= 500 ? `  settled in ${fmt(run.settledMs / 1000, 1)} s` : "") +
      (run.responses < 100 ? `  (p99 of ${run.responses} responses)` : ""),
  );
}

export function printMedians(
  title: string,
  medians: Partial<Record<Target, TargetMedians>>,
  targets: readonly Target[],
): void {
  console.log(title);
  console.log(
    `  ${"target".padEnd(9)} ${pad("req/s", 8)} ${pad("p50 ms", 8)} ${pad("p90 ms", 8)} ${pad("p99 ms", 8)} ` +
      `${pad("busy", 5)} ${pad("µs/req", 7)} ${pad("non-2xx", 8)}`,
  );
  for (const target of targets) {
    const s = medians[target];
    if (!s) continue;
    console.log(
      `  ${target.padEnd(9)} ${pad(fmt(s.rps, 0), 8)} ${pad(fmt(s.p50Ms, 2), 8)} ${pad(fmt(s.p90Ms, 2), 8)} ` +
        `${pad(fmt(s.p99Ms, 2), 8)} ${pad(`${fmt(s.serverEventLoopUtilization * 100, 0)}%`, 5)} ` +
        `${pad(fmt(s.serverBusyUsPerRequest, 0), 7)} ${pad(String(s.non2xx), 8)}` +
        (s.shed > 0 ? `  (${s.shed} shed)` : ""),
    );
  }
}

export function printRatios(kind: DatabaseKind, connections: number, r: Ratios): void {
  console.log(
    `  ${kind} at ${connections} connections: keyed /icp/criteria ÷ bare-pg ${percent(r.pipelineOverBarePg)}, ` +
      `÷ bare ${percent(r.pipelineOverBare)}, ÷ bare-http ${percent(r.pipelineOverBareHttp)}, ` +
      `÷ db-only ${percent(r.pipelineOverDbOnly)}; db-only ÷ bare-pg ${percent(r.dbOnlyOverBarePg)}, ` +
      `bare-pg ÷ bare ${percent(r.barePgOverBare)}, bare ÷ bare-http ${percent(r.bareOverBareHttp)}`,
  );
  console.log(
    `  ${" ".repeat(kind.length)}    /dashboard/kpis p99 ${fmt(r.kpisP99Ms, 2)} ms (${signedMs(r.kpisP99MinusBareMs)} over bare), ` +
      `keyed /icp/criteria p99 ${signedMs(r.pipelineP99MinusBareMs)} over bare`,
  );
}

export function printGoals(goals: Goal[]): void {
  for (const g of goals) {
    const show = (v: number) => (g.higherIsBetter ? fmt(v, 3) : `${fmt(v, 0)} ms`);
    const sign = g.higherIsBetter ? "≥" : "≤";
    console.log(
      `  ${`${g.figure} at ${g.connections} connections`.padEnd(58)} ${pad(Number.isNaN(g.value) ? "—" : show(g.value), 9)}` +
        `  floor ${sign} ${show(g.floor)}, goal ${sign} ${show(g.goal)}  ${g.verdict}`,
    );
  }
}

/** One database's medians per phase, then its ratios. */
export function printDatabaseSummary(
  kind: DatabaseKind,
  r: { closedLoop: LevelFigures[]; openLoop: OpenLoopFigures | null },
  rounds: number,
): void {
  for (const level of r.closedLoop) {
    console.log("");
    printMedians(
      `${kind}, closed loop at ${level.connections} connections, medians over ${rounds} round(s):`,
      level.medians,
      TARGETS,
    );
  }
  const o = r.openLoop;
  if (o) {
    console.log("");
    printMedians(
      `${kind}, open loop at ${o.ratePerSec} req/s, medians over ${rounds} round(s):`,
      o.medians,
      OPEN_TARGETS,
    );
    console.log(
      `  pipeline p99 − bare p99 ${signedMs(o.pipelineP99MinusBareMs)}, − bare-pg p99 ${signedMs(o.pipelineP99MinusBarePgMs)}, ` +
        `− db-only p99 ${signedMs(o.pipelineP99MinusDbOnlyMs)}`,
    );
    if (o.saturatedTargets.length > 0) {
      console.log(
        `  WARNING: ${o.saturatedTargets.join(", ")} near saturation at ${o.ratePerSec} req/s (server busy ≥ 90%, ` +
          "< 95% of the rate answered, or the rate > 90% of its closed-loop throughput): the open-loop " +
          "latencies include queueing (lower BENCH_LATENCY_RATE)",
      );
    }
  }
  console.log("");
  for (const level of r.closedLoop) printRatios(kind, level.connections, level.ratios);
}
