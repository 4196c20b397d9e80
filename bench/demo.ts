/**
 * Demo benchmark (`npm run bench -- demo`): how long `ascribe demo` takes — the same function the CLI
 * calls (`seedDemo`, src/admin/demo.ts) — at `BENCH_DEMO_SCALE` on a fresh PostgreSQL database and at
 * `BENCH_DEMO_PGLITE_SCALE` on a fresh in-memory PGlite. See bench/README.md, "Demo".
 */
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import { seedDemo } from "../src/admin/demo.ts";
import { rows } from "../src/db/client.ts";
import type { DemoProgress } from "../src/demo/write.ts";
import {
  benchServerUrl,
  envNumber,
  type FreshDatabase,
  freshPglite,
  freshPostgres,
  machineInfo,
  writeResults,
} from "./support.ts";

/** 0 skips that backend. */
const pgScale = envNumber("BENCH_DEMO_SCALE", 100, { allowZero: true });
const pgliteScale = envNumber("BENCH_DEMO_PGLITE_SCALE", 10, { allowZero: true });
const seed = Math.round(envNumber("BENCH_DEMO_SEED", 1, { allowZero: true }));
const serverUrl = benchServerUrl();

interface Run {
  backend: "postgres" | "pglite";
  scale: number;
  seconds: number;
  /** Seconds per phase of the writer (catalog, contacts, sale counting). */
  phases: Record<string, number>;
  contacts: number;
  events: number;
  eventsPerSec: number;
}

function fresh(backend: Run["backend"]): Promise<FreshDatabase> {
  if (backend === "pglite") return freshPglite();
  return freshPostgres(serverUrl, { statementTimeoutMs: 0, prefix: "ascribe_bench_demo" });
}

async function runDemo(backend: Run["backend"], scale: number): Promise<Run> {
  const { db, drop } = await fresh(backend);
  try {
    const phases: Record<string, number> = {};
    let phase = "";
    let phaseStarted = 0;
    let contacts = 0;
    let lastPrint = 0;
    const progress = (p: DemoProgress) => {
      const now = performance.now();
      if (p.phase !== phase) {
        if (phase) phases[phase] = (phases[phase] ?? 0) + (now - phaseStarted) / 1000;
        phase = p.phase;
        phaseStarted = now;
      }
      if (p.phase === "contacts") contacts = p.done;
      if (now - lastPrint > 10_000) {
        lastPrint = now;
        console.log(`    ${p.phase} ${p.done}/${p.total}`);
      }
    };
    const started = performance.now();
    const created = await seedDemo(db, { seed, scale }, progress, { today: "2026-01-15" });
    const seconds = (performance.now() - started) / 1000;
    if (phase) phases[phase] = (phases[phase] ?? 0) + (performance.now() - phaseStarted) / 1000;
    const [row] = await db.admin(created.account_id, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from events where account_id = ${created.account_id}`,
      ),
    );
    const events = row?.n ?? 0;
    return { backend, scale, seconds, phases, contacts, events, eventsPerSec: events / seconds };
  } finally {
    await drop();
  }
}

async function main(): Promise<void> {
  const runs: Run[] = [];
  const plan: [Run["backend"], number][] = [];
  if (pgScale > 0) plan.push(["postgres", pgScale]);
  if (pgliteScale > 0) plan.push(["pglite", pgliteScale]);
  for (const [backend, scale] of plan) {
    console.log(`${backend}, ascribe demo --scale ${scale} --seed ${seed}:`);
    const run = await runDemo(backend, scale);
    runs.push(run);
    const phases = Object.entries(run.phases)
      .map(([p, s]) => `${p} ${s.toFixed(1)} s`)
      .join(", ");
    console.log(
      `  ${run.seconds.toFixed(1)} s, ${run.events} CRM events (${run.eventsPerSec.toFixed(0)} events/s), ` +
        `${run.contacts} contacts; ${phases}`,
    );
  }
  const output = {
    suite: "demo",
    timestamp: new Date().toISOString(),
    machine: machineInfo(),
    parameters: { pgScale, pgliteScale, seed, postgres: new URL(serverUrl).host },
    runs,
  };
  const file = writeResults("demo", output.timestamp, output);
  console.log(`\nResults: ${file} (and demo-latest.json)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
