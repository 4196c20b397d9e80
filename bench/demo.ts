/**
 * Demo benchmark (`npm run bench -- demo`): how long `ascribe demo` takes — the same function the CLI
 * calls (`seedDemo`, src/admin/demo.ts) — at `BENCH_DEMO_SCALE` on a fresh PostgreSQL database and at
 * `BENCH_DEMO_PGLITE_SCALE` on a fresh in-memory PGlite. See bench/README.md, "Demo".
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import pg from "pg";
import { seedDemo } from "../src/admin/demo.ts";
import { type Database, openEmbedded, openPostgres, rows } from "../src/db/client.ts";
import type { DemoProgress } from "../src/demo/write.ts";

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got ${raw}`);
  return value;
}

/** 0 skips that backend. */
const pgScale = envNumber("BENCH_DEMO_SCALE", 100);
const pgliteScale = envNumber("BENCH_DEMO_PGLITE_SCALE", 10);
const seed = Math.round(envNumber("BENCH_DEMO_SEED", 1));
const serverUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

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

async function fresh(backend: Run["backend"]): Promise<{ db: Database; drop: () => Promise<void> }> {
  if (backend === "pglite") {
    const db = await openEmbedded(null);
    await db.migrate();
    return { db, drop: () => db.close() };
  }
  const name = `ascribe_bench_demo_${process.pid}_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), 0);
  await db.migrate();
  return {
    db,
    async drop() {
      await db.close();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
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
  const cpu = os.cpus();
  const output = {
    suite: "demo",
    timestamp: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? "unknown",
      totalMemoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      loadAverage1m: os.loadavg()[0] ?? 0,
    },
    parameters: { pgScale, pgliteScale, seed, postgres: new URL(serverUrl).host },
    runs,
  };
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(output, null, 2)}\n`;
  const file = `${dir}demo-${output.timestamp.replaceAll(":", "-")}.json`;
  writeFileSync(file, json);
  writeFileSync(`${dir}demo-latest.json`, json);
  console.log(`\nResults: ${file} (and demo-latest.json)`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
