/**
 * Import throughput benchmark (`npm run bench -- import`): events per second through the real
 * `ascribe import events` path (`runImport` → `ingestCrmEvents`), on a fresh in-memory PGlite and on
 * a fresh PostgreSQL database, first import (inserts) and replay (no-op) measured separately.
 * See bench/README.md, "Import".
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import pg from "pg";
import { createAccount } from "../src/admin/accounts.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { type Database, rows } from "../src/db/client.ts";
import { type ImportSummary, runImport } from "../src/import/run-import.ts";
import { type Files, writeFiles } from "./import-files.ts";
import {
  benchServerUrl,
  envList,
  envNumber,
  freshPglite,
  freshPostgres,
  machineInfo,
  median,
  writeResults,
} from "./support.ts";

/**
 * `postgres-one-lane`: PostgreSQL with the batches written one at a time, as before import lanes
 * (src/import/import-lanes.ts), for the lanes' gain measured in the same run.
 */
const BACKENDS = ["pglite", "postgres", "postgres-one-lane"] as const;
type Backend = (typeof BACKENDS)[number];

const rounds = Math.round(envNumber("BENCH_ROUNDS", 3));
const scale = envNumber("BENCH_IMPORT_SCALE", 4);
const seed = Math.round(envNumber("BENCH_IMPORT_SEED", 1));
const serverUrl = benchServerUrl();
const backends = envList("BENCH_IMPORT_BACKENDS", "pglite,postgres");
for (const b of backends) {
  if (!(BACKENDS as readonly string[]).includes(b))
    throw new Error(`unknown backend ${b} (${BACKENDS.join(", ")})`);
}

// ---------------------------------------------------------------------------------------------------
// Fresh databases.

interface Fresh {
  db: Database;
  /** CPU seconds the database's server processes used so far (PostgreSQL on this machine), else null. */
  serverCpu: () => Promise<number | null>;
  drop: () => Promise<void>;
}

/** utime + stime of a process, in seconds (Linux /proc; clock ticks are 100 Hz there). */
function processCpu(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function openFresh(backend: Backend): Promise<Fresh> {
  if (backend === "pglite") return { ...(await freshPglite()), serverCpu: async () => null };
  const { db, name, url, drop } = await freshPostgres(serverUrl, { statementTimeoutMs: 600_000 });
  const monitor = new pg.Client({ connectionString: serverUrl });
  await monitor.connect();
  const local = ["127.0.0.1", "localhost", "::1"].includes(url.hostname);
  // Backends seen so far and their last CPU reading: one that exits keeps its last figure.
  const seen = new Map<number, number>();
  return {
    db,
    async serverCpu() {
      if (!local) return null;
      const { rows: backends } = await monitor.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [name],
      );
      for (const { pid } of backends) {
        const cpu = processCpu(pid);
        if (cpu === null) return null;
        seen.set(pid, cpu);
      }
      let total = 0;
      for (const cpu of seen.values()) total += cpu;
      return total;
    },
    async drop() {
      await monitor.end();
      await drop();
    },
  };
}

// ---------------------------------------------------------------------------------------------------

interface Timed {
  seconds: number;
  eventsPerSec: number;
  /** CPU milliseconds per 1,000 events: this process, and PostgreSQL's backends (null on PGlite). */
  cpuMsPerThousand: { node: number; server: number | null };
  summary: Omit<ImportSummary, "errors"> & { errors: number };
}

interface Round {
  backend: Backend;
  round: number;
  spendSeconds: number;
  first: Timed;
  replay: Timed;
  stored: { events: number; contacts: number; counted: number; resolved: number; touchpoints: number };
}

const secrets = createSecretBox([{ id: "bench", key: randomBytes(32) }]);

async function timedImport(
  fresh: Fresh,
  account: string,
  kind: string,
  file: string,
  n: number,
  lanes?: number,
) {
  const serverBefore = await fresh.serverCpu();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const summary = await runImport(fresh.db, secrets, { kind, account, file }, () => {}, { lanes });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = await fresh.serverCpu();
  const perThousand = (ms: number) => Math.round((ms / n) * 1000 * 10) / 10;
  if (summary.errors.length > 0) {
    throw new Error(`${kind}: ${summary.errors.length} errors, first: ${JSON.stringify(summary.errors[0])}`);
  }
  return {
    seconds,
    eventsPerSec: n / seconds,
    cpuMsPerThousand: {
      node: perThousand((cpu.user + cpu.system) / 1000),
      server:
        serverBefore === null || serverAfter === null
          ? null
          : perThousand((serverAfter - serverBefore) * 1000),
    },
    summary: { ...summary, errors: summary.errors.length },
  };
}

async function runRound(backend: Backend, round: number, files: Files): Promise<Round> {
  const fresh = await openFresh(backend);
  const { db } = fresh;
  try {
    const account = await createAccount(db, {
      name: "Import bench",
      plan: "business",
      timezone: "Europe/Paris",
      owner: "owner@bench.ascribe.local",
    });
    const spend = await timedImport(fresh, account.id, "spend", files.spend, files.spendRows);
    const lanes = backend === "postgres-one-lane" ? 1 : undefined;
    const first = await timedImport(fresh, account.id, "events", files.events, files.eventCount, lanes);
    if (first.summary.imported !== files.eventCount) {
      throw new Error(`first import: ${first.summary.imported} imported, expected ${files.eventCount}`);
    }
    const replay = await timedImport(fresh, account.id, "events", files.events, files.eventCount, lanes);
    if (replay.summary.skipped !== files.eventCount || replay.summary.imported + replay.summary.updated > 0) {
      throw new Error(`replay wrote something: ${JSON.stringify(replay.summary)}`);
    }
    const [stored] = await db.admin(account.id, (tx) =>
      rows<Round["stored"]>(
        tx,
        sql`
          select (select count(*)::int from events where account_id = ${account.id}) as events,
                 (select count(*)::int from contacts where account_id = ${account.id}) as contacts,
                 (select count(*)::int from events where account_id = ${account.id} and counted) as counted,
                 (select count(*)::int from events
                  where account_id = ${account.id} and resolution <> 'unresolved') as resolved,
                 (select count(*)::int from touchpoints where account_id = ${account.id}) as touchpoints`,
      ),
    );
    if (!stored || stored.events !== files.eventCount || stored.touchpoints !== files.eventCount) {
      throw new Error(`stored rows do not match the file: ${JSON.stringify(stored)}`);
    }
    return { backend, round, spendSeconds: spend.seconds, first, replay, stored };
  } finally {
    await fresh.drop();
  }
}

function cpuText(t: Timed): string {
  const { node, server } = t.cpuMsPerThousand;
  return `node ${node} ms${server === null ? "" : ` + pg ${server} ms`}`;
}

const GOAL_EVENTS_PER_SEC = 20_000;
/** Issue 20's floor for the first import on PostgreSQL, below its goal. */
const FLOOR_EVENTS_PER_SEC = 10_000;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), "ascribe-bench-import-"));
  try {
    const generated = performance.now();
    const files = writeFiles(dir, { seed, scale });
    console.log(
      `Events file: ${files.eventCount} events of ${files.contacts} contacts (demo generator, seed ${seed}, scale ${scale}), ` +
        `${files.spendRows} spend rows; generated in ${((performance.now() - generated) / 1000).toFixed(1)} s`,
    );
    console.log(
      `  types ${Object.entries(files.byType)
        .map(([t, n]) => `${t} ${n}`)
        .join(
          ", ",
        )}; ad id ${files.withAdId}, utm_content only ${files.withUtmContentOnly}, no UTM ${files.withoutUtm}`,
    );
    const results: Round[] = [];
    // Interleaved: each round runs every backend in turn, so noise lasting a while hits both.
    console.log(
      `\nbackends: ${(backends as Backend[]).map((b) => (b === "pglite" ? `${b} (in memory)` : `${b} (${new URL(serverUrl).host})`)).join(", ")}`,
    );
    for (let round = 1; round <= rounds; round++) {
      for (const backend of backends as Backend[]) {
        const r = await runRound(backend, round, files);
        results.push(r);
        console.log(
          `  round ${round}/${rounds} ${backend.padEnd(8)} first ${r.first.eventsPerSec.toFixed(0).padStart(6)} events/s (${r.first.seconds.toFixed(2)} s)` +
            ` cpu/1k ${cpuText(r.first)}` +
            `  replay ${r.replay.eventsPerSec.toFixed(0).padStart(6)} events/s (${r.replay.seconds.toFixed(2)} s)` +
            ` cpu/1k ${cpuText(r.replay)}` +
            `  spend ${r.spendSeconds.toFixed(2)} s  stored ${r.stored.events} events, ${r.stored.contacts} contacts, ` +
            `${r.stored.counted} counted sales, ${r.stored.resolved} resolved`,
        );
      }
    }
    const medians = Object.fromEntries(
      (backends as Backend[]).map((backend) => {
        const mine = results.filter((r) => r.backend === backend);
        const of = (figure: (r: Round) => number) => median(mine.map(figure), 0);
        return [
          backend,
          {
            firstEventsPerSec: Math.round(of((r) => r.first.eventsPerSec)),
            replayEventsPerSec: Math.round(of((r) => r.replay.eventsPerSec)),
            firstSeconds: of((r) => r.first.seconds),
            replaySeconds: of((r) => r.replay.seconds),
          },
        ];
      }),
    );
    console.log(`\nMedians over ${rounds} round(s), ${files.eventCount} events:`);
    console.log("  backend     first events/s  replay events/s");
    for (const [backend, m] of Object.entries(medians)) {
      console.log(
        `  ${backend.padEnd(10)} ${String(m.firstEventsPerSec).padStart(15)} ${String(m.replayEventsPerSec).padStart(16)}`,
      );
    }
    const pgFirst = medians.postgres?.firstEventsPerSec;
    const goal =
      pgFirst === undefined
        ? null
        : {
            eventsPerSec: GOAL_EVENTS_PER_SEC,
            floorEventsPerSec: FLOOR_EVENTS_PER_SEC,
            postgresFirst: pgFirst,
            met: pgFirst >= GOAL_EVENTS_PER_SEC,
            floorMet: pgFirst >= FLOOR_EVENTS_PER_SEC,
          };
    const pg = medians.postgres;
    const lite = medians.pglite;
    const oneLane = medians["postgres-one-lane"];
    if (pg && oneLane) {
      console.log(
        `  postgres ÷ postgres-one-lane: first import ${(pg.firstEventsPerSec / oneLane.firstEventsPerSec).toFixed(2)}×, ` +
          `replay ${(pg.replayEventsPerSec / oneLane.replayEventsPerSec).toFixed(2)}×`,
      );
    }
    if (pg && lite) {
      console.log(
        `  postgres ÷ pglite: first import ${(pg.firstEventsPerSec / lite.firstEventsPerSec).toFixed(2)}×, ` +
          `replay ${(pg.replayEventsPerSec / lite.replayEventsPerSec).toFixed(2)}×`,
      );
    }
    if (goal) {
      console.log(
        `\n  PostgreSQL first import ${goal.postgresFirst} events/s  floor ≥ ${FLOOR_EVENTS_PER_SEC}, goal ≥ ${GOAL_EVENTS_PER_SEC}  ` +
          `${goal.met ? "GOAL" : goal.floorMet ? "FLOOR" : "MISS"}`,
      );
    }

    const output = {
      suite: "import",
      timestamp: new Date().toISOString(),
      machine: machineInfo(),
      parameters: { rounds, scale, seed, backends, postgres: new URL(serverUrl).host },
      file: { ...files, spend: undefined, events: undefined },
      runs: results,
      medians,
      goal,
    };
    const file = writeResults("import", output.timestamp, output);
    console.log(`\nResults: ${file} (and import-latest.json)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
