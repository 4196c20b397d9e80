/**
 * Pipeline overhead benchmark (`npm run bench`): authenticated `GET /api/v1/icp/criteria` through the
 * full pipeline, against a bare Fastify route returning the same body, and against a bare route that
 * runs only the same tenant transaction on the same database. See bench/README.md.
 *
 * Two phases: throughput (closed loop, autocannon at saturation) and latency (open loop, requests
 * issued at a fixed rate that no target saturates, so p99 shows what a request costs, not queueing).
 *
 * The servers run on this process's main thread (as in `ascribe serve`); the load generator runs in a
 * worker thread of the same process, so it does not share the servers' event loop.
 */
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { type MessagePort, workerData } from "node:worker_threads";
import { sql } from "drizzle-orm";
import Fastify from "fastify";
import pino from "pino";
import { createAccount } from "../src/admin/accounts.ts";
import { createKey } from "../src/admin/keys.ts";
import { rows } from "../src/db/client.ts";
import type { AuditSink } from "../src/http/audit.ts";
import { RATE_LIMIT } from "../src/http/pipeline.ts";
import type { CounterStore } from "../src/http/rate-limiter.ts";
import { icpCriteria } from "../src/queries/icp-criteria.ts";
import { replaceIcpCriteria } from "../src/queries/replace-icp-criteria.ts";
import { API_PREFIX } from "../src/routes/route-def.ts";
import {
  type ClosedLoopRun,
  closedLoop,
  LoadGenerator,
  listenAddress,
  loadKnobs,
  runSuite,
  serveApp,
  serveLoad,
} from "./load.ts";
import {
  envInt,
  type FreshDatabase,
  fmt,
  freshPglite,
  machineInfo,
  median,
  pad,
  Samples,
  writeResults,
} from "./support.ts";

// ---------------------------------------------------------------------------------------------------
// Messages between the main thread (servers) and the load-generator worker.

const TARGETS = ["bare", "pipeline", "db-only"] as const;
type Target = (typeof TARGETS)[number];

const TARGET_DESCRIPTION: Record<Target, string> = {
  bare: "bare Fastify route, same body, no database",
  pipeline:
    "full pipeline (buildApp): auth, plan, rate limit, scope, validation, handler, barrier, redaction, audit",
  "db-only": "bare Fastify route + the same tenant transaction (db.tenant → icpCriteria)",
};

interface WorkerInput {
  keys: string[];
}

interface RunSpec {
  url: string;
  durationSec: number;
  /** Closed loop: concurrent connections. Open loop: most connections (and requests) in flight. */
  connections: number;
  /** Open loop at this many requests per second; absent: closed loop (autocannon). */
  ratePerSec?: number;
  /** Count this run's requests per key and rate-limit window (the pipeline's runs). */
  trackKeys: boolean;
}

/** A run's figures; latencies in milliseconds, per response, with sub-millisecond resolution. */
interface LoadResult extends Omit<ClosedLoopRun, "ok"> {
  rps: number;
  /** Most requests any one key sent in one rate-limit window so far (tracked runs only). */
  maxPerKeyPerWindow: number;
  /** Open-loop runs only. */
  openLoop?: OpenLoopStats;
}

interface OpenLoopStats {
  ratePerSec: number;
  /** Requests the schedule held (rate × duration); all of them were issued. */
  scheduled: number;
  /** Most requests in flight at once (issued, not yet answered; includes those waiting for a socket). */
  maxInFlight: number;
  /** How late the dispatcher issued requests against their schedule (worker timer resolution). */
  dispatchLagP99Ms: number;
  dispatchLagMaxMs: number;
}

/** The pipeline's rate-limit window (fixed, epoch-aligned, 60 s). */
const RATE_WINDOW_MS = 60_000;

// ---------------------------------------------------------------------------------------------------
// Worker thread: runs autocannon on request.

/** Autocannon's default per-request timeout, used by the open-loop driver too. */
const REQUEST_TIMEOUT_MS = 10_000;

function workerMain(port: MessagePort): void {
  const { keys } = workerData as WorkerInput;
  // Round robin over the keys, across runs and phases; per-key counts per rate-limit window of the
  // tracked runs.
  let nextKey = 0;
  const perWindow = new Map<number, Uint32Array>();
  let maxPerKeyPerWindow = 0;
  const authorization = (track: boolean): string => {
    const index = nextKey;
    nextKey = (nextKey + 1) % keys.length;
    if (track) {
      const window = Math.floor(Date.now() / RATE_WINDOW_MS);
      let counts = perWindow.get(window);
      if (!counts) {
        counts = new Uint32Array(keys.length);
        perWindow.set(window, counts);
      }
      const used = (counts[index] ?? 0) + 1;
      counts[index] = used;
      if (used > maxPerKeyPerWindow) maxPerKeyPerWindow = used;
    }
    return `Bearer ${keys[index] ?? ""}`;
  };

  // Closed loop: autocannon, each connection sends its next request when the previous answer arrives.
  const runClosed = async (spec: RunSpec): Promise<LoadResult> => {
    const {
      responses,
      ok: _ok,
      elapsedSec,
      ...rest
    } = await closedLoop(spec, {
      method: "GET",
      path: `${API_PREFIX}/icp/criteria`,
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, authorization: authorization(spec.trackKeys) },
      }),
    });
    return { responses, elapsedSec, rps: responses / elapsedSec, ...rest, maxPerKeyPerWindow };
  };

  // Open loop: request i is issued at start + i / rate whether or not earlier ones were answered, on
  // keep-alive connections (at most `connections`; beyond that a request waits for a free socket, and
  // that wait counts in its response time). One agent per server, kept across runs, so that measured
  // runs reuse the warm-up's connections.
  const agents = new Map<string, Agent>();
  const runOpen = (spec: RunSpec, ratePerSec: number): Promise<LoadResult> =>
    new Promise((resolve) => {
      const url = new URL(spec.url);
      let agent = agents.get(url.origin);
      if (!agent) {
        agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
        agents.set(url.origin, agent);
      }
      const socketAgent = agent;
      const latencies = new Samples();
      const lags = new Samples();
      const statusCodes: Record<string, number> = {};
      let non2xx = 0;
      let errors = 0;
      let timeouts = 0;
      let inFlight = 0;
      let maxInFlight = 0;
      let issued = 0;
      let lastAnswer = 0;
      const scheduled = Math.max(1, Math.round(ratePerSec * spec.durationSec));
      const intervalMs = 1000 / ratePerSec;
      const started = performance.now();

      const settle = (): void => {
        inFlight -= 1;
        lastAnswer = performance.now();
        if (issued === scheduled && inFlight === 0) {
          const elapsedSec = (lastAnswer - started) / 1000;
          const lag = lags.summary();
          resolve({
            responses: latencies.count,
            elapsedSec,
            rps: latencies.count / elapsedSec,
            latencyMs: latencies.summary(),
            non2xx,
            errors,
            timeouts,
            resets: 0,
            statusCodes,
            maxPerKeyPerWindow,
            openLoop: {
              ratePerSec,
              scheduled,
              maxInFlight,
              dispatchLagP99Ms: lag.p99,
              dispatchLagMaxMs: lag.max,
            },
          });
        }
      };

      const issue = (): void => {
        const sentAt = performance.now();
        inFlight += 1;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        let done = false;
        const finish = (outcome: () => void): void => {
          if (done) return;
          done = true;
          outcome();
          settle();
        };
        const req = httpRequest(
          {
            agent: socketAgent,
            hostname: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "GET",
            headers: { authorization: authorization(spec.trackKeys) },
          },
          (res) => {
            res.resume();
            res.on("end", () =>
              finish(() => {
                latencies.add(performance.now() - sentAt);
                const code = res.statusCode ?? 0;
                statusCodes[code] = (statusCodes[code] ?? 0) + 1;
                if (code < 200 || code > 299) non2xx += 1;
              }),
            );
            res.on("error", () => finish(() => (errors += 1)));
          },
        );
        req.setTimeout(REQUEST_TIMEOUT_MS, () => {
          finish(() => {
            errors += 1;
            timeouts += 1;
          });
          req.destroy();
        });
        req.on("error", () => finish(() => (errors += 1)));
        req.end();
      };

      const pump = (): void => {
        while (issued < scheduled) {
          const due = started + issued * intervalMs;
          const now = performance.now();
          if (due > now) break;
          lags.add(now - due);
          issued += 1;
          issue();
        }
        if (issued < scheduled) {
          setTimeout(pump, Math.max(0, started + issued * intervalMs - performance.now()));
        }
      };
      pump();
    });

  serveLoad(
    port,
    (spec: RunSpec) => (spec.ratePerSec === undefined ? runClosed(spec) : runOpen(spec, spec.ratePerSec)),
    () => {
      for (const agent of agents.values()) agent.destroy();
    },
  );
}

// ---------------------------------------------------------------------------------------------------
// Main thread.

interface MeasuredRun extends LoadResult {
  round: number;
  target: Target;
  /** Main-thread (servers + database) event-loop utilisation during the run, 0..1. */
  serverEventLoopUtilization: number;
  /** Main-thread busy time per response, µs: the servers' CPU cost of one request. */
  serverBusyUsPerRequest: number;
}

async function main(): Promise<void> {
  const { durationSec, warmupSec, rounds, connections } = loadKnobs(10);
  // Round robin over enough keys that none exceeds the per-key limit in a window: 1000 keys carry
  // 1000 × 600 / 60 = 10,000 req/s sustained for a whole minute.
  const keyCount = envInt("BENCH_KEYS", 1000, 1);
  // Latency phase rate, requests per second; 0 (default): half the pipeline's measured throughput.
  const latencyRateOverride = envInt("BENCH_LATENCY_RATE", 0, 1);
  // The round robin spreads a window's pipeline requests evenly over the keys: at `rate` req/s for a
  // whole 60 s window, each key gets ⌈rate × 60 ÷ keys⌉.
  const checkKeyBudget = (rate: number, what: string): void => {
    const perKey = Math.ceil((rate * RATE_WINDOW_MS) / 1000 / keyCount);
    if (perKey >= RATE_LIMIT) {
      throw new Error(
        `${what} ${rate} req/s would send up to ${perKey} requests per key per window to the pipeline ` +
          `(limit ${RATE_LIMIT}): raise BENCH_KEYS`,
      );
    }
  };
  if (latencyRateOverride > 0) checkKeyBudget(latencyRateOverride, "BENCH_LATENCY_RATE");
  const path = `${API_PREFIX}/icp/criteria`;

  const logger = pino({ level: "info" }, process.stderr);
  let fresh: FreshDatabase | null = null;
  let counters: CounterStore | null = null;
  let audit: AuditSink | null = null;
  /** Closes the listening servers, in order. */
  const closers: (() => PromiseLike<unknown>)[] = [];
  let load: LoadGenerator<RunSpec, LoadResult> | null = null;

  try {
    // --- Database and seed -------------------------------------------------------------------------
    const seedStarted = performance.now();
    fresh = await freshPglite();
    const database = fresh.db;
    const owner = "owner@bench.ascribe.local";
    const account = await createAccount(database, {
      name: "Bench Company",
      plan: "business",
      timezone: "Europe/Paris",
      currency: "EUR",
      owner,
    });
    const accountId = account.id;
    await database.admin(accountId, (tx) =>
      replaceIcpCriteria(tx, accountId, {
        criteria: {
          industries: ["coaching", "B2B SaaS"],
          decision_maker_roles: ["founder", "head of sales"],
          min_annual_revenue: 1_200_000,
          countries: ["FR", "BE", "CH"],
          disqualifiers: ["student", "no budget"],
        },
      }),
    );
    const keys: string[] = [];
    for (let i = 0; i < keyCount; i++) {
      const created = await createKey(database, {
        account: accountId,
        as: owner,
        name: `bench ${i + 1}`,
        scopes: ["*"],
      });
      keys.push(created.key);
    }
    const firstKey = keys[0] ?? "";
    const seedMs = performance.now() - seedStarted;

    // --- The three servers -------------------------------------------------------------------------
    const served = await serveApp(database, logger);
    counters = served.counters;
    audit = served.audit;
    const pipelineApp = served.app;
    closers.push(() => pipelineApp.close());
    const siteUrl = served.url;

    const reference = await fetch(siteUrl + path, { headers: { authorization: `Bearer ${firstKey}` } });
    const referenceText = await reference.text();
    if (reference.status !== 200) {
      throw new Error(`pipeline answered ${reference.status} to the reference request: ${referenceText}`);
    }
    const body: unknown = JSON.parse(referenceText);

    const bareApp = Fastify();
    bareApp.get(path, async () => body);
    closers.push(() => bareApp.close());
    await bareApp.listen({ host: "127.0.0.1", port: 0 });

    const dbOnlyApp = Fastify();
    dbOnlyApp.get(path, async () => ({
      data: await database.tenant(accountId, (tx) => icpCriteria(tx, accountId)),
    }));
    closers.push(() => dbOnlyApp.close());
    await dbOnlyApp.listen({ host: "127.0.0.1", port: 0 });

    const urls: Record<Target, string> = {
      bare: listenAddress(bareApp.server) + path,
      pipeline: siteUrl + path,
      "db-only": listenAddress(dbOnlyApp.server) + path,
    };
    // The three must serve the same bytes, or the comparison is not of the same work.
    for (const target of TARGETS) {
      const response = await fetch(urls[target], { headers: { authorization: `Bearer ${firstKey}` } });
      const text = await response.text();
      if (response.status !== 200 || text !== referenceText) {
        throw new Error(`${target} answered ${response.status} ${text}, expected 200 ${referenceText}`);
      }
    }

    const machine = machineInfo();
    const parameters = {
      durationSec,
      warmupSec,
      connections,
      rounds,
      pipelining: 1,
      keys: keyCount,
      rateLimitPerKeyPerMinute: RATE_LIMIT,
      latencyRatePerSec:
        latencyRateOverride === 0 ? "50% of the pipeline's median throughput" : latencyRateOverride,
      path,
      bodyBytes: Buffer.byteLength(referenceText),
      database: "embedded PGlite, in memory",
      loadGenerator:
        "worker thread of the same process (servers on the main thread): autocannon 8 (throughput, closed " +
        "loop); node:http keep-alive agent issuing requests on a fixed schedule (latency, open loop)",
    };
    console.log(
      `Ascribe pipeline bench: node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load ${fmt(machine.loadAverage1m, 2)}`,
    );
    console.log(
      `GET ${path} (${parameters.bodyBytes} B body), ${connections} connections, ${rounds} round(s) of ${warmupSec} s warm-up + ${durationSec} s per target and phase, ${keyCount} keys (seeded in ${fmt(seedMs / 1000, 1)} s)`,
    );

    // --- Runs --------------------------------------------------------------------------------------
    load = await LoadGenerator.start<RunSpec, LoadResult>(import.meta.url, { keys } satisfies WorkerInput);
    const generator = load;
    let pipelineResponses = 2; // the reference and the sanity request

    const execute = async (
      target: Target,
      seconds: number,
      ratePerSec?: number,
    ): Promise<MeasuredRun | null> => {
      if (seconds === 0) return null;
      const before = performance.eventLoopUtilization();
      const result = await generator.run({
        url: urls[target],
        durationSec: seconds,
        connections,
        ratePerSec,
        trackKeys: target === "pipeline",
      });
      const elu = performance.eventLoopUtilization(before);
      if (target === "pipeline") {
        pipelineResponses += result.responses;
        // Leave no audit batch behind to be written during the next target's run.
        await audit?.flush();
      }
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        throw new Error(
          `${target}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts ` +
            `(status codes ${JSON.stringify(result.statusCodes)}, max ${result.maxPerKeyPerWindow} requests ` +
            `per key per window): the figures would be meaningless`,
        );
      }
      return {
        round: 0,
        target,
        ...result,
        serverEventLoopUtilization: elu.utilization,
        serverBusyUsPerRequest: result.responses === 0 ? 0 : (elu.active * 1000) / result.responses,
      };
    };

    /** Rounds × targets in turn (bare → pipeline → db-only), each with its own warm-up. */
    const phase = async (ratePerSec?: number): Promise<MeasuredRun[]> => {
      const measuredRuns: MeasuredRun[] = [];
      for (let round = 1; round <= rounds; round++) {
        for (const target of TARGETS) {
          await execute(target, warmupSec, ratePerSec);
          const measured = await execute(target, durationSec, ratePerSec);
          if (!measured) continue;
          measured.round = round;
          measuredRuns.push(measured);
          const open = measured.openLoop;
          console.log(
            `  round ${round}/${rounds} ${target.padEnd(8)} ${pad(fmt(measured.rps, 0), 7)} req/s  ` +
              `p50 ${fmt(measured.latencyMs.p50, 2)} ms  p99 ${fmt(measured.latencyMs.p99, 2)} ms  ` +
              `server busy ${fmt(measured.serverEventLoopUtilization * 100, 0)}% ` +
              `(${fmt(measured.serverBusyUsPerRequest, 0)} µs/req)  ` +
              (open ? `in flight ≤ ${open.maxInFlight}  lag p99 ${fmt(open.dispatchLagP99Ms, 2)} ms  ` : "") +
              `non-2xx ${measured.non2xx}`,
          );
        }
      }
      return measuredRuns;
    };

    // Throughput: closed loop, at saturation.
    console.log("");
    console.log(`Throughput phase (closed loop, ${connections} connections):`);
    const runs = await phase();

    const summary = {} as Record<
      Target,
      { rps: number; p50Ms: number; p99Ms: number; serverBusyUsPerRequest: number; non2xx: number }
    >;
    for (const target of TARGETS) {
      const mine = runs.filter((r) => r.target === target);
      summary[target] = {
        rps: median(mine.map((r) => r.rps)),
        p50Ms: median(mine.map((r) => r.latencyMs.p50)),
        p99Ms: median(mine.map((r) => r.latencyMs.p99)),
        serverBusyUsPerRequest: median(mine.map((r) => r.serverBusyUsPerRequest)),
        non2xx: mine.reduce((sum, r) => sum + r.non2xx, 0),
      };
    }

    // Latency: open loop, at a fixed rate below every target's capacity.
    const latencyRate =
      latencyRateOverride > 0
        ? latencyRateOverride
        : Math.max(10, Math.floor((summary.pipeline.rps * 0.5) / 10) * 10);
    checkKeyBudget(latencyRate, "latency rate");
    console.log("");
    console.log(
      `Latency phase (open loop, ${latencyRate} req/s, ` +
        `${latencyRateOverride > 0 ? "BENCH_LATENCY_RATE" : "50% of the pipeline's median throughput"}, ` +
        `≤ ${connections} connections):`,
    );
    const latencyRuns = await phase(latencyRate);

    const latencySummary = {} as Record<
      Target,
      {
        rps: number;
        p50Ms: number;
        p90Ms: number;
        p99Ms: number;
        serverEventLoopUtilization: number;
        maxInFlight: number;
        dispatchLagP99Ms: number;
        non2xx: number;
      }
    >;
    for (const target of TARGETS) {
      const mine = latencyRuns.filter((r) => r.target === target);
      latencySummary[target] = {
        rps: median(mine.map((r) => r.rps)),
        p50Ms: median(mine.map((r) => r.latencyMs.p50)),
        p90Ms: median(mine.map((r) => r.latencyMs.p90)),
        p99Ms: median(mine.map((r) => r.latencyMs.p99)),
        serverEventLoopUtilization: median(mine.map((r) => r.serverEventLoopUtilization)),
        maxInFlight: Math.max(0, ...mine.map((r) => r.openLoop?.maxInFlight ?? 0)),
        dispatchLagP99Ms: median(mine.map((r) => r.openLoop?.dispatchLagP99Ms ?? 0)),
        non2xx: mine.reduce((sum, r) => sum + r.non2xx, 0),
      };
    }
    // The rate must leave every target below saturation, or the open-loop p99 is queueing again.
    const saturated = TARGETS.filter(
      (target) =>
        latencySummary[target].serverEventLoopUtilization >= 0.9 ||
        latencySummary[target].rps < latencyRate * 0.95 ||
        latencyRate > summary[target].rps * 0.9,
    );

    // --- Goals, context ----------------------------------------------------------------------------
    const throughputRatio = summary.pipeline.rps / summary.bare.rps;
    const addedP99Ms = latencySummary.pipeline.p99Ms - latencySummary.bare.p99Ms;
    const goals = {
      throughputRatio: {
        goal: ">= 0.60",
        phase: "throughput",
        value: throughputRatio,
        pass: throughputRatio >= 0.6,
      },
      addedP99Ms: {
        goal: "<= 5",
        phase: "latency",
        atRatePerSec: latencyRate,
        value: addedP99Ms,
        pass: addedP99Ms <= 5,
      },
    };
    const latency = {
      ratePerSec: latencyRate,
      rateSource: latencyRateOverride > 0 ? "BENCH_LATENCY_RATE" : "50% of the pipeline's median throughput",
      driver:
        "open loop: request i issued at start + i / rate, regardless of earlier answers, on at most " +
        `${connections} keep-alive connections (node:http agent); response time from issue to last byte`,
      runs: latencyRuns,
      medians: latencySummary,
      pipelineP99MinusBareMs: addedP99Ms,
      pipelineP99MinusDbOnlyMs: latencySummary.pipeline.p99Ms - latencySummary["db-only"].p99Ms,
      dbOnlyP99MinusBareMs: latencySummary["db-only"].p99Ms - latencySummary.bare.p99Ms,
      pipelineP50MinusBareMs: latencySummary.pipeline.p50Ms - latencySummary.bare.p50Ms,
      saturatedTargets: saturated,
    };
    const context = {
      dbOnlyOverBareThroughput: summary["db-only"].rps / summary.bare.rps,
      pipelineOverDbOnlyThroughput: summary.pipeline.rps / summary["db-only"].rps,
      /** Closed loop, at saturation: queueing (≈ connections ÷ throughput), not the latency goal's figure. */
      closedLoopPipelineP99MinusBareMs: summary.pipeline.p99Ms - summary.bare.p99Ms,
      closedLoopDbOnlyP99MinusBareMs: summary["db-only"].p99Ms - summary.bare.p99Ms,
      closedLoopPipelineP99MinusDbOnlyMs: summary.pipeline.p99Ms - summary["db-only"].p99Ms,
      latencyPipelineP99MinusDbOnlyMs: latency.pipelineP99MinusDbOnlyMs,
    };

    const auditRows = await database.admin(accountId, (tx) =>
      rows<{ n: number }>(tx, sql`select count(*)::int as n from audit_log where account_id = ${accountId}`),
    );
    const auditWritten = auditRows[0]?.n ?? 0;
    const maxPerKeyPerWindow = Math.max(0, ...[...runs, ...latencyRuns].map((r) => r.maxPerKeyPerWindow));

    // --- Summary -----------------------------------------------------------------------------------
    const signed = (ms: number): string => `${ms >= 0 ? "+" : ""}${fmt(ms, 2)} ms`;
    const verdict = (pass: boolean) => (pass ? "PASS" : "MISS");
    console.log("");
    console.log(`Throughput (closed loop, ${connections} connections), medians over ${rounds} round(s):`);
    console.log(
      `  ${"target".padEnd(9)} ${pad("req/s", 8)} ${pad("p50 ms", 7)} ${pad("p99 ms", 7)} ${pad("µs/req", 7)} ${pad("non-2xx", 8)}`,
    );
    for (const target of TARGETS) {
      const s = summary[target];
      console.log(
        `  ${target.padEnd(9)} ${pad(fmt(s.rps, 0), 8)} ${pad(fmt(s.p50Ms, 2), 7)} ${pad(fmt(s.p99Ms, 2), 7)} ` +
          `${pad(fmt(s.serverBusyUsPerRequest, 0), 7)} ${pad(String(s.non2xx), 8)}`,
      );
    }
    console.log("");
    console.log(`Latency (open loop at ${latencyRate} req/s), medians over ${rounds} round(s):`);
    console.log(
      `  ${"target".padEnd(9)} ${pad("req/s", 8)} ${pad("p50 ms", 7)} ${pad("p90 ms", 7)} ${pad("p99 ms", 7)} ` +
        `${pad("busy", 5)} ${pad("in flight", 9)} ${pad("non-2xx", 8)}`,
    );
    for (const target of TARGETS) {
      const s = latencySummary[target];
      console.log(
        `  ${target.padEnd(9)} ${pad(fmt(s.rps, 0), 8)} ${pad(fmt(s.p50Ms, 2), 7)} ${pad(fmt(s.p90Ms, 2), 7)} ` +
          `${pad(fmt(s.p99Ms, 2), 7)} ${pad(`${fmt(s.serverEventLoopUtilization * 100, 0)}%`, 5)} ` +
          `${pad(`≤ ${s.maxInFlight}`, 9)} ${pad(String(s.non2xx), 8)}`,
      );
    }
    if (saturated.length > 0) {
      console.log(
        `  WARNING: ${saturated.join(", ")} near saturation at ${latencyRate} req/s (server busy ≥ 90%, ` +
          "answered < 95% of the rate, or rate > 90% of its throughput): the latency figures include queueing",
      );
    }
    console.log("");
    const goalLabel = (text: string) => text.padEnd(40);
    console.log(
      `  ${goalLabel("pipeline / bare throughput")} ${pad(`${fmt(throughputRatio * 100, 1)}%`, 10)}  goal ≥ 60%    ${verdict(goals.throughputRatio.pass)}`,
    );
    console.log(
      `  ${goalLabel(`pipeline p99 − bare p99 at ${latencyRate} req/s`)} ${pad(signed(addedP99Ms), 10)}  goal ≤ 5 ms   ${verdict(goals.addedP99Ms.pass)}`,
    );
    console.log(
      `  context at ${latencyRate} req/s: pipeline p99 − db-only p99 ${signed(latency.pipelineP99MinusDbOnlyMs)}, ` +
        `db-only p99 − bare p99 ${signed(latency.dbOnlyP99MinusBareMs)}, ` +
        `pipeline p50 − bare p50 ${signed(latency.pipelineP50MinusBareMs)}`,
    );
    console.log(
      `  context, throughput: db-only / bare ${fmt(context.dbOnlyOverBareThroughput * 100, 1)}%, ` +
        `pipeline / db-only ${fmt(context.pipelineOverDbOnlyThroughput * 100, 1)}%; closed-loop pipeline p99 − bare ` +
        `p99 ${signed(context.closedLoopPipelineP99MinusBareMs)} (queueing at saturation, not the goal's figure)`,
    );
    console.log(
      `  checks: 0 non-2xx in every run of both phases (warm-ups included); max ${maxPerKeyPerWindow} requests ` +
        `per key per rate-limit window (limit ${RATE_LIMIT}); ${auditWritten} audit rows written for ≥ ${pipelineResponses} pipeline responses`,
    );

    // --- Results file ------------------------------------------------------------------------------
    const results = {
      benchmark: "pipeline-overhead",
      timestamp: new Date().toISOString(),
      machine,
      parameters,
      targets: TARGET_DESCRIPTION,
      runs,
      medians: summary,
      latency,
      goals,
      context,
      checks: {
        allResponses2xx: true,
        maxPerKeyPerWindow,
        auditRowsWritten: auditWritten,
        pipelineResponses,
      },
    };
    const file = writeResults("pipeline", results.timestamp, results);
    console.log("");
    console.log(`Results: ${file} (and pipeline-latest.json)`);
  } finally {
    await load?.stop();
    for (const close of closers) await close();
    await audit?.close();
    await counters?.close();
    await fresh?.drop();
  }
}

runSuite(main, workerMain);
