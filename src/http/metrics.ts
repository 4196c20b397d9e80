import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** A connection pool's state at scrape time (node-postgres; the embedded database has none). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** Why `/api/collect` refused a beacon (the `reason` label). */
export type BeaconRefusal =
  | "rate_limited_ip"
  | "rate_limited_account"
  | "invalid_json"
  | "invalid_beacon"
  | "unknown_client_key";

/** Why a request was refused with 503 `overloaded` (load-shedding.ts). */
export type ShedReason = "event_loop_delay" | "event_loop_utilization";

export type ImportRowOutcome = "imported" | "updated" | "skipped" | "error";

/** What the service counts for Prometheus; `noMetrics` when METRICS_PORT is unset. */
export interface Metrics {
  /** One answered request; `route` is the matched pattern, never the URL (ids would be labels). */
  request(sample: { method: string; route: string; status: number; seconds: number }): void;
  beaconAccepted(): void;
  beaconRefused(reason: BeaconRefusal): void;
  importRows(kind: string, outcome: ImportRowOutcome, count: number): void;
  ruleRun(outcome: { status: "ok" | "error"; dry_run: boolean }): void;
  /** One request refused by load shedding. */
  requestShed(reason: ShedReason): void;
  /** The Prometheus text exposition. */
  render(): Promise<{ contentType: string; body: string }>;
}

export const noMetrics: Metrics = {
  request: () => {},
  beaconAccepted: () => {},
  beaconRefused: () => {},
  importRows: () => {},
  ruleRun: () => {},
  requestShed: () => {},
  render: async () => ({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "" }),
};

/** Seconds: most API answers take milliseconds; a report over a large account, seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Metrics on a registry of their own, not prom-client's global one: two apps in one process (tests,
 * the bench) would otherwise register the same names twice and throw.
 */
export function createMetrics(options: { pool?: () => PoolStats | null } = {}): Metrics {
  const registry = new Registry();
  // Event-loop lag, heap, GC, open handles and CPU: prom-client's defaults.
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "ascribe_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "ascribe_http_request_duration_seconds",
    help: "Time from receiving a request to its answer, by method, route pattern and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const beacons = new Counter({
    name: "ascribe_beacons_total",
    help: "Tracking beacons at /api/collect: accepted (committed) or refused, with the reason",
    labelNames: ["outcome", "reason"] as const,
    registers: [registry],
  });
  const importRows = new Counter({
    name: "ascribe_import_rows_total",
    help: "Rows of imports carried out by this process, by kind and outcome",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  });
  const ruleRuns = new Counter({
    name: "ascribe_rule_runs_total",
    help: "Ad rule runs recorded, by status and whether they were dry runs",
    labelNames: ["status", "dry_run"] as const,
    registers: [registry],
  });
  const shed = new Counter({
    name: "ascribe_http_requests_shed_total",
    help: "Requests refused with 503 overloaded by load shedding, by the check that was past its limit",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const pool = options.pool;
  if (pool) {
    const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        // Read at scrape time: the pool keeps the figures, nothing needs updating per query.
        collect() {
          const stats = pool();
          if (stats) this.set(read(stats));
        },
      });
    gauge("ascribe_db_pool_connections", "PostgreSQL connections open in the pool", (s) => s.total);
    gauge("ascribe_db_pool_idle_connections", "PostgreSQL connections idle in the pool", (s) => s.idle);
    gauge("ascribe_db_pool_waiting_requests", "Queries waiting for a free connection", (s) => s.waiting);
  }

  return {
    request({ method, route, status, seconds }) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    beaconAccepted: () => beacons.inc({ outcome: "accepted", reason: "" }),
    beaconRefused: (reason) => beacons.inc({ outcome: "refused", reason }),
    importRows(kind, outcome, count) {
      if (count > 0) importRows.inc({ kind, outcome }, count);
    },
    ruleRun: ({ status, dry_run }) => ruleRuns.inc({ status, dry_run: String(dry_run) }),
    requestShed: (reason) => shed.inc({ reason }),
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}
