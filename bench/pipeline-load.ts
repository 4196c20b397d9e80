/**
 * The pipeline suite's load generator (bench/pipeline.ts), in a worker thread of the bench process:
 * the closed loop (autocannon) and the open loop (requests on a fixed schedule), every request
 * carrying the next API key of a round robin. See bench/README.md ("Pipeline").
 */
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { type MessagePort, workerData } from "node:worker_threads";
import { type ClosedLoopRun, closedLoop, serveLoad } from "./load.ts";
import { Samples } from "./support.ts";

export interface WorkerInput {
  keys: string[];
}

export interface RunSpec {
  /** The whole URL, path and query included. */
  url: string;
  durationSec: number;
  /** Closed loop: concurrent connections. Open loop: most connections (and requests) in flight. */
  connections: number;
  /** Open loop at this many requests per second; absent: closed loop (autocannon). */
  ratePerSec?: number;
  /** Count this run's requests per key and rate-limit window (the app's runs). */
  trackKeys: boolean;
}

/** A run's figures; latencies in milliseconds, per response, with sub-millisecond resolution. */
export interface LoadResult extends ClosedLoopRun {
  /** 2xx responses per second of wall time. */
  rps: number;
  /** Most requests any one key sent in one rate-limit window so far (tracked runs only). */
  maxPerKeyPerWindow: number;
  /** Open-loop runs only. */
  openLoop?: OpenLoopStats;
}

export interface OpenLoopStats {
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
export const RATE_WINDOW_MS = 60_000;

/** Autocannon's default per-request timeout, used by the open-loop driver too. */
const REQUEST_TIMEOUT_MS = 10_000;

interface KeyRotation {
  /** The next key's Authorization header; `track`: count it in its rate-limit window. */
  authorization(track: boolean): string;
  maxPerKeyPerWindow(): number;
}

/** Round robin over the keys, across runs, phases and targets, with per-window counts. */
function keyRotation(keys: string[]): KeyRotation {
  let nextKey = 0;
  const perWindow = new Map<number, Uint32Array>();
  let maxPerKeyPerWindow = 0;
  return {
    authorization(track) {
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
    },
    maxPerKeyPerWindow: () => maxPerKeyPerWindow,
  };
}

/** Closed loop: autocannon, each connection sends its next request when the previous answer arrives. */
async function runClosed(spec: RunSpec, keys: KeyRotation): Promise<LoadResult> {
  const url = new URL(spec.url);
  const result = await closedLoop(
    { url: url.origin, connections: spec.connections, durationSec: spec.durationSec },
    {
      method: "GET",
      path: url.pathname + url.search,
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, authorization: keys.authorization(spec.trackKeys) },
      }),
    },
  );
  return { ...result, rps: result.ok / result.elapsedSec, maxPerKeyPerWindow: keys.maxPerKeyPerWindow() };
}

/** One GET on `agent`; `done` once: with the status at the answer's last byte, or without on failure. */
function sendOne(
  url: URL,
  agent: Agent,
  authorization: string,
  done: (outcome: { status?: number; timedOut?: boolean }) => void,
): void {
  let finished = false;
  const finish = (outcome: { status?: number; timedOut?: boolean }): void => {
    if (finished) return;
    finished = true;
    done(outcome);
  };
  const req = httpRequest(
    {
      agent,
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      method: "GET",
      headers: { authorization },
    },
    (res) => {
      res.resume();
      res.on("end", () => finish({ status: res.statusCode ?? 0 }));
      res.on("error", () => finish({}));
    },
  );
  req.setTimeout(REQUEST_TIMEOUT_MS, () => {
    finish({ timedOut: true });
    req.destroy();
  });
  req.on("error", () => finish({}));
  req.end();
}

/**
 * Open loop: request i is issued at start + i / rate whether or not earlier ones were answered, on
 * `agent`'s keep-alive connections (at most `connections`; beyond that a request waits for a free
 * socket, and that wait counts in its response time).
 */
function runOpen(spec: RunSpec, ratePerSec: number, agent: Agent, keys: KeyRotation): Promise<LoadResult> {
  return new Promise((resolve) => {
    const url = new URL(spec.url);
    const latencies = new Samples();
    const lags = new Samples();
    const statusCodes: Record<string, number> = {};
    const counts = { ok: 0, non2xx: 0, errors: 0, timeouts: 0 };
    let inFlight = 0;
    let maxInFlight = 0;
    let issued = 0;
    const scheduled = Math.max(1, Math.round(ratePerSec * spec.durationSec));
    const intervalMs = 1000 / ratePerSec;
    const started = performance.now();

    const settle = (): void => {
      inFlight -= 1;
      if (issued < scheduled || inFlight > 0) return;
      const elapsedSec = (performance.now() - started) / 1000;
      const lag = lags.summary();
      resolve({
        responses: latencies.count,
        elapsedSec,
        rps: counts.ok / elapsedSec,
        latencyMs: latencies.summary(),
        ...counts,
        resets: 0,
        statusCodes,
        maxPerKeyPerWindow: keys.maxPerKeyPerWindow(),
        openLoop: {
          ratePerSec,
          scheduled,
          maxInFlight,
          dispatchLagP99Ms: lag.p99,
          dispatchLagMaxMs: lag.max,
        },
      });
    };

    const issue = (): void => {
      const sentAt = performance.now();
      inFlight += 1;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      sendOne(url, agent, keys.authorization(spec.trackKeys), (outcome) => {
        if (outcome.status === undefined) {
          counts.errors += 1;
          if (outcome.timedOut) counts.timeouts += 1;
        } else {
          latencies.add(performance.now() - sentAt);
          statusCodes[outcome.status] = (statusCodes[outcome.status] ?? 0) + 1;
          if (outcome.status >= 200 && outcome.status <= 299) counts.ok += 1;
          else counts.non2xx += 1;
        }
        settle();
      });
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
}

/** The worker thread's side: runs each spec the main thread sends. */
export function pipelineWorker(port: MessagePort): void {
  const keys = keyRotation((workerData as WorkerInput).keys);
  // One agent per server, kept across runs, so that measured runs reuse the warm-up's connections.
  const agents = new Map<string, Agent>();
  const agentFor = (spec: RunSpec): Agent => {
    const origin = new URL(spec.url).origin;
    let agent = agents.get(origin);
    if (!agent) {
      agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
      agents.set(origin, agent);
    }
    return agent;
  };
  serveLoad(
    port,
    (spec: RunSpec) =>
      spec.ratePerSec === undefined
        ? runClosed(spec, keys)
        : runOpen(spec, spec.ratePerSec, agentFor(spec), keys),
    () => {
      for (const agent of agents.values()) agent.destroy();
    },
  );
}
