/**
 * What the benchmark suites share: environment knobs, fresh databases, order statistics, the machine
 * description and the results files. See bench/README.md.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { SecretBox } from "../src/crypto/secret-box.ts";
import { type Database, openEmbedded, openPostgres } from "../src/db/client.ts";
import { createLocalObjectStore } from "../src/storage/local-store.ts";
import type { ObjectStore } from "../src/storage/object-store.ts";

// ---------------------------------------------------------------------------------------------------
// Environment knobs.

/** An integer ≥ `min` from the environment; `fallback` when unset or empty. */
export function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** A finite number > 0 (≥ 0 with `allowZero`) from the environment; `fallback` when unset or empty. */
export function envNumber(name: string, fallback: number, options: { allowZero?: boolean } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  const allowed = options.allowZero ? value >= 0 : value > 0;
  if (!Number.isFinite(value) || !allowed) {
    throw new Error(
      `${name} must be ${options.allowZero ? "a number ≥ 0" : "a positive number"}, got ${raw}`,
    );
  }
  return value;
}

/** A comma-separated list from the environment (`fallback` when unset), trimmed, empty items dropped. */
export function envList(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export const DEFAULT_SERVER_URL = "postgres://postgres@127.0.0.1:5432/test";

/** The PostgreSQL server fresh databases are created on: `BENCH_DATABASE_URL`, else `DATABASE_URL`. */
export function benchServerUrl(): string {
  return process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
}

// ---------------------------------------------------------------------------------------------------
// Fresh databases, migrated; `drop` closes the database and deletes it.

export interface FreshDatabase {
  db: Database;
  drop(): Promise<void>;
}

/** A fresh PGlite: in memory, or on disk in a temporary directory removed by `drop`. */
export async function freshPglite(where: "memory" | "disk" = "memory"): Promise<FreshDatabase> {
  if (where === "memory") {
    const db = await openEmbedded(null);
    await db.migrate();
    return { db, drop: () => db.close() };
  }
  const dir = mkdtempSync(join(os.tmpdir(), "ascribe-bench-"));
  const db = await openEmbedded(dir);
  await db.migrate();
  return {
    db,
    async drop() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FreshPostgres extends FreshDatabase {
  /** The database's name on the server. */
  name: string;
  /** The database's URL. */
  url: URL;
}

/** One statement on its own connection, outside any transaction (CREATE DATABASE, VACUUM). */
export async function onServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(statement);
  await client.end();
}

/** A uniquely named PostgreSQL database created on `serverUrl`; `drop` drops it (with force). */
export async function freshPostgres(
  serverUrl: string,
  options: { statementTimeoutMs: number; prefix?: string },
): Promise<FreshPostgres> {
  const name = `${options.prefix ?? "ascribe_bench"}_${process.pid}_${randomUUID().slice(0, 8)}`;
  await onServer(serverUrl, `create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), options.statementTimeoutMs);
  await db.migrate();
  return {
    db,
    name,
    url,
    async drop() {
      await db.close();
      await onServer(serverUrl, `drop database if exists "${name}" with (force)`);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Order statistics.

/** The median of `values`; `empty` when there are none. */
export function median(values: readonly number[], empty = Number.NaN): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return empty;
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] ?? Number.NaN;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? Number.NaN) + upper) / 2;
}

/** The nearest-rank `q` quantile of ascending `sorted`; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Mean, quantiles and maximum of `samples` (any order); all 0 when empty. */
export function summarize(samples: Float64Array): LatencySummary {
  if (samples.length === 0) return { mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  const sorted = samples.slice().sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    mean: sum / sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted[sorted.length - 1] ?? 0,
  };
}

/** A growing buffer of samples (per-response times in milliseconds), in arrival order. */
export class Samples {
  private values = new Float64Array(1 << 16);
  count = 0;
  add(value: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count] = value;
    this.count += 1;
  }
  summary(): LatencySummary {
    return summarize(this.values.subarray(0, this.count));
  }
}

// ---------------------------------------------------------------------------------------------------
// Output.

export const fmt = (value: number, digits: number): string => value.toFixed(digits);
export const pad = (text: string, width: number): string => text.padStart(width);

/** The machine the figures were taken on. */
export function machineInfo() {
  const cpu = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    totalMemoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverage1m: os.loadavg()[0] ?? 0,
  };
}

/**
 * Writes `results` to bench/results/<suite>-<timestamp>.json and <suite>-latest.json; returns the
 * first's path.
 */
export function writeResults(suite: string, timestamp: string, results: unknown): string {
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  const file = `${dir}${suite}-${timestamp.replaceAll(":", "-")}.json`;
  writeFileSync(file, json);
  writeFileSync(`${dir}${suite}-latest.json`, json);
  return file;
}

/** A local object store in a temporary folder removed when the process exits. */
export function benchFiles(secrets: SecretBox, siteUrl: () => string): ObjectStore {
  const root = mkdtempSync(join(os.tmpdir(), "ascribe-bench-files-"));
  process.once("exit", () => rmSync(root, { recursive: true, force: true }));
  return createLocalObjectStore({ root, secrets, siteUrl });
}
