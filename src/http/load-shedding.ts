import underPressure, { TYPE_EVENT_LOOP_UTILIZATION } from "@fastify/under-pressure";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors.ts";
import type { Metrics, ShedReason } from "./metrics.ts";

/** When the service stops taking requests (LOAD_SHED_* in config.ts); 0 turns a check off. */
export interface LoadShedding {
  /** Mean event-loop delay over a sample window, in milliseconds, past which requests are refused. */
  maxEventLoopDelayMs: number;
  /** Share of the sample window the event loop was busy (0–1), past which requests are refused. */
  maxEventLoopUtilization: number;
  /** `Retry-After` (and `retry_after_seconds`) of the refusal. */
  retryAfterSeconds: number;
  /** How often the event loop is sampled; also how long a refusal lasts at least. */
  sampleIntervalMs: number;
}

/**
 * The defaults (docs/operations.md "Load shedding" has the measurements): saturated at 10–50
 * connections, an instance on PostgreSQL showed a mean delay of 4–16 ms (windows up to ~110 ms), one on
 * the embedded database, whose queries run on the event loop, 20–525 ms (windows up to ~400 ms and
 * past). 1 s is a loop that no longer turns over: each request needs several turns, so queued ones
 * would wait seconds. Utilization is off: a healthy instance at full throughput is ~100 % busy.
 */
export const DEFAULT_LOAD_SHEDDING: LoadShedding = {
  maxEventLoopDelayMs: 1000,
  maxEventLoopUtilization: 0,
  retryAfterSeconds: 5,
  sampleIntervalMs: 500,
};

/** The operator's probes answer whatever the load: a refused liveness probe would restart a busy instance. */
const EXEMPT_ROUTES = new Set(["/healthz", "/readyz"]);

function isExempt(request: FastifyRequest): boolean {
  return EXEMPT_ROUTES.has(request.routeOptions.url ?? "");
}

/**
 * Past a threshold, every request but the probes is answered at once `503 {"error":"overloaded",
 * "retry_after_seconds":N}` with `Retry-After: N` (through the app's error handler, so with the
 * usual headers), instead of queueing behind a stalled event loop. Registered after the hook that
 * sets up `request.ascribe` (the refusal's headers read it) and before the routes.
 * (`GET /metrics` has a listener of its own, outside the app: it is never refused.)
 */
export async function registerLoadShedding(
  app: FastifyInstance,
  options: { shedding: LoadShedding; metrics: Metrics },
): Promise<void> {
  const { shedding, metrics } = options;
  if (shedding.maxEventLoopDelayMs <= 0 && shedding.maxEventLoopUtilization <= 0) return;
  let lastWarning = 0;
  await app.register(underPressure, {
    maxEventLoopDelay: shedding.maxEventLoopDelayMs,
    maxEventLoopUtilization: shedding.maxEventLoopUtilization,
    // Utilization over the last window, not since start-up (the plugin's default).
    eventLoopUtilizationMode: "interval",
    sampleInterval: shedding.sampleIntervalMs,
    retryAfter: shedding.retryAfterSeconds,
    // A rejection goes to the app's error handler, which answers the ApiError as every other one.
    pressureHandler: async (request, _reply, type, value) => {
      if (isExempt(request)) return;
      const reason: ShedReason =
        type === TYPE_EVENT_LOOP_UTILIZATION ? "event_loop_utilization" : "event_loop_delay";
      metrics.requestShed(reason);
      const now = Date.now();
      if (now - lastWarning >= 10_000) {
        lastWarning = now;
        request.log.warn({ reason, value }, "overloaded: refusing requests with 503");
      }
      throw new ApiError("overloaded", { retry_after_seconds: shedding.retryAfterSeconds });
    },
  });
}
