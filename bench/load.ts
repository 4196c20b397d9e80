/**
 * Load on the real app over HTTP (pipeline, collect): the app listening as `ascribe serve` runs it,
 * the part of autocannon used, and the plumbing between the main thread (servers) and the
 * load-generator worker thread of the same process.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { isMainThread, type MessagePort, parentPort, Worker } from "node:worker_threads";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { type AppDeps, buildApp } from "../src/app.ts";
import { createSecretBox, type SecretBox } from "../src/crypto/secret-box.ts";
import type { Database } from "../src/db/client.ts";
import { type AuditSink, createAuditWriter } from "../src/http/audit.ts";
import { type CounterStore, createMemoryCounterStore } from "../src/http/rate-limiter.ts";
import { keyStoreFor } from "../src/main.ts";
import { routes } from "../src/routes/index.ts";
import { benchFiles, envInt, type LatencySummary, Samples } from "./support.ts";

/**
 * The knobs of a suite's load runs: seconds measured per run, seconds of unmeasured warm-up before
 * each (0: none), rounds, concurrent connections.
 */
export function loadKnobs(defaultConnections: number) {
  return {
    durationSec: envInt("BENCH_DURATION", 10, 1),
    warmupSec: envInt("BENCH_WARMUP", 2, 0),
    rounds: envInt("BENCH_ROUNDS", 3, 1),
    connections: envInt("BENCH_CONNECTIONS", defaultConnections, 1),
  };
}

// ---------------------------------------------------------------------------------------------------
// The app.

export interface ServedApp {
  app: FastifyInstance;
  /** `http://127.0.0.1:PORT`, the app's site URL. */
  url: string;
  counters: CounterStore;
  audit: AuditSink;
}

/**
 * The real app, `buildApp` as `ascribe serve` builds it (key store, memory counter store, batched
 * audit writer), listening on 127.0.0.1 at a port of the system's choosing. The caller closes the app, then `audit` and
 * `counters`; if it fails to listen, this closes them.
 */
export async function serveApp(
  db: Database,
  logger: Logger,
  collect?: AppDeps["collect"],
  /** The keyring: the webhook suite seals its secrets with it before the app opens them. */
  secrets: SecretBox = createSecretBox([{ id: "bench", key: randomBytes(32) }]),
): Promise<ServedApp> {
  const counters = createMemoryCounterStore();
  const audit = createAuditWriter(db, logger);
  let url = "http://127.0.0.1";
  let app: FastifyInstance | null = null;
  try {
    app = await buildApp({
      db,
      keys: keyStoreFor(db),
      secrets,
      files: benchFiles(secrets, () => url),
      counters,
      audit,
      logger,
      routes,
      siteUrl: () => url,
      collect,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    url = listenAddress(app.server);
    return { app, url, counters, audit };
  } catch (err) {
    await app?.close();
    await audit.close();
    await counters.close();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------
// autocannon 8 ships no typings: the part used here.

export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  pipelining?: number;
  requests?: AutocannonRequest[];
}

/** The fields read here; they exist both in the raw (worker thread) and the aggregated result. */
interface AutocannonResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  statusCodeStats: Record<string, { count: number }>;
}

interface AutocannonInstance {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void,
  ): AutocannonInstance;
}

type Autocannon = (
  options: AutocannonOptions,
  callback: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

export interface ClosedLoopRun {
  responses: number;
  /** 2xx responses. */
  ok: number;
  /** Wall time of the run. */
  elapsedSec: number;
  /** Milliseconds, from autocannon's per-response times (sub-millisecond resolution). */
  latencyMs: LatencySummary;
  non2xx: number;
  errors: number;
  timeouts: number;
  resets: number;
  statusCodes: Record<string, number>;
}

/**
 * A closed-loop run of autocannon (pipelining 1): each of `connections` connections sends `request`
 * again as soon as the previous answer arrives, for `durationSec` seconds.
 */
export function closedLoop(
  spec: { url: string; connections: number; durationSec: number },
  request: AutocannonRequest,
): Promise<ClosedLoopRun> {
  const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
  return new Promise((resolve, reject) => {
    const latencies = new Samples();
    let ok = 0;
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.durationSec,
        pipelining: 1,
        requests: [request],
      },
      (error, result) => {
        if (error) return reject(error);
        const statusCodes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
        resolve({
          responses: latencies.count,
          ok,
          elapsedSec: (performance.now() - started) / 1000,
          latencyMs: latencies.summary(),
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          resets: result.resets,
          statusCodes,
        });
      },
    );
    instance.on("response", (_client, status, _bytes, responseTimeMs) => {
      latencies.add(responseTimeMs);
      if (status >= 200 && status <= 299) ok += 1;
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// Messages between the main thread and the load-generator worker.

type ToWorker<Spec> = { type: "run"; spec: Spec } | { type: "exit" };
type FromWorker<Result> =
  | { type: "ready" }
  | { type: "result"; result: Result }
  | { type: "error"; message: string };

/**
 * Worker side: runs each spec the main thread sends, one at a time, and answers with its result;
 * `onExit` runs before the port closes.
 */
export function serveLoad<Spec, Result>(
  port: MessagePort,
  run: (spec: Spec) => Promise<Result>,
  onExit?: () => void,
): void {
  port.on("message", (message: ToWorker<Spec>) => {
    if (message.type === "exit") {
      onExit?.();
      port.close();
      return;
    }
    run(message.spec).then(
      (result) => port.postMessage({ type: "result", result } satisfies FromWorker<Result>),
      (err: unknown) =>
        port.postMessage({ type: "error", message: String(err) } satisfies FromWorker<Result>),
    );
  });
  port.postMessage({ type: "ready" } satisfies FromWorker<Result>);
}

/** Main-thread side: a handle on the load-generator worker, one run at a time. */
export class LoadGenerator<Spec, Result> {
  private pending: { resolve(result: Result): void; reject(error: Error): void } | null = null;
  private readonly ready: Promise<void>;

  private constructor(private readonly worker: Worker) {
    this.ready = new Promise((resolve, reject) => {
      worker.on("message", (message: FromWorker<Result>) => {
        if (message.type === "ready") return resolve();
        const pending = this.pending;
        this.pending = null;
        if (!pending) return;
        if (message.type === "result") pending.resolve(message.result);
        else pending.reject(new Error(`load generator: ${message.message}`));
      });
      worker.on("error", (err) => {
        reject(err);
        this.pending?.reject(err);
        this.pending = null;
      });
    });
  }

  /**
   * Starts a worker thread that loads `suiteUrl` (the suite's `import.meta.url`, whose worker branch
   * calls `serveLoad`) with `workerData`.
   */
  static async start<Spec, Result>(
    suiteUrl: string,
    workerData: unknown,
  ): Promise<LoadGenerator<Spec, Result>> {
    // Worker threads do not inherit tsx's loader hooks: register them in the worker, then load the suite.
    const tsxApi = import.meta.resolve("tsx/esm/api");
    const boot = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(suiteUrl)}); });`;
    const generator = new LoadGenerator<Spec, Result>(new Worker(boot, { eval: true, workerData }));
    await generator.ready;
    return generator;
  }

  run(spec: Spec): Promise<Result> {
    if (this.pending) throw new Error("load generator is busy");
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ type: "run", spec } satisfies ToWorker<Spec>);
    });
  }

  async stop(): Promise<void> {
    this.worker.postMessage({ type: "exit" } satisfies ToWorker<Spec>);
    await this.worker.terminate();
  }
}

/**
 * A load suite's entry point: `main` on the main thread (on failure: its message, exit code 1),
 * `worker` in the load-generator thread that `LoadGenerator.start` starts on the same file.
 */
export function runSuite(main: () => Promise<void>, worker: (port: MessagePort) => void): void {
  if (isMainThread) {
    main().catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    });
  } else if (parentPort) {
    worker(parentPort);
  }
}

/** The `http://127.0.0.1:PORT` a server listens on. */
export function listenAddress(server: Server): string {
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}
