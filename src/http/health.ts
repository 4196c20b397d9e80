import { sql } from "drizzle-orm";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { type Database, MIGRATIONS_DIR, rows } from "../db/client.ts";
import { migrationLag } from "../db/migration-lag.ts";
import type { CounterStore } from "./rate-limiter.ts";

/** A frozen database must not hang a readiness probe: past this, /readyz answers 503. */
export const READY_TIMEOUT_MS = 2_000;

export interface HealthDeps {
  db: Database;
  counters: CounterStore;
  logger: FastifyBaseLogger;
  timeoutMs?: number;
}

export interface Readiness {
  status: "ready" | "not ready";
  checks: { database: string; migrations: string; counters: string };
}

function countersCheck(counters: CounterStore): string {
  const { backend, degraded } = counters.status();
  return degraded ? "memory (redis unreachable)" : backend;
}

type DatabaseCheck = { database: string; migrations: string };

/** What drizzle's migrator recorded against what this build ships. */
async function checkDatabase(db: Database): Promise<DatabaseCheck> {
  const applied = await db.probe((tx) =>
    rows<{ count: number; last: string | null }>(
      tx,
      sql`select count(*)::int as count, max(created_at)::text as last from drizzle.__drizzle_migrations`,
    ),
  );
  const count = applied[0]?.count ?? 0;
  const lag = migrationLag(MIGRATIONS_DIR, Number(applied[0]?.last ?? 0));
  return {
    database: "ok",
    migrations: lag.behind === 0 ? "ok" : `behind (${count} of ${lag.shipped} applied)`,
  };
}

/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the database answers within the limit and
 * its migrations are current; the counters' backend is shown, never a reason to be unready, since
 * requests are still served on in-process counters). Both outside the key pipeline and the rate
 * limits, and neither reads a tenant's row.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const timeoutMs = deps.timeoutMs ?? READY_TIMEOUT_MS;
  // One probe at a time: while the database is frozen, probes every few seconds would otherwise
  // each hold a pool connection until the pool is exhausted.
  let inFlight: Promise<DatabaseCheck> | null = null;
  const probe = (): Promise<DatabaseCheck> => {
    inFlight ??= checkDatabase(deps.db)
      .catch((err: unknown) => {
        deps.logger.warn({ err }, "readiness: database check failed");
        return { database: "unreachable", migrations: "unknown" };
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<DatabaseCheck>((resolve) => {
      timer = setTimeout(
        () => resolve({ database: `timeout (no answer within ${timeoutMs} ms)`, migrations: "unknown" }),
        timeoutMs,
      );
    });
    const database = await Promise.race([probe(), timedOut]);
    clearTimeout(timer);
    const ready = database.database === "ok" && database.migrations === "ok";
    const body: Readiness = {
      status: ready ? "ready" : "not ready",
      checks: { ...database, counters: countersCheck(deps.counters) },
    };
    return reply.status(ready ? 200 : 503).send(body);
  });
}
