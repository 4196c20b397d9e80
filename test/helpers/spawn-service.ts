import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { postgresTemplate } from "./postgres-template.ts";

/** The repository root: `bin/ascribe.js` is resolved from here, whatever the current directory. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "bin", "ascribe.js");

export const backend = process.env.DATABASE_URL ? "postgres" : "embedded";

/** What a spawned `ascribe` process runs on: its own DATA_DIR, and its own database on PostgreSQL. */
export interface ServiceEnv {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** The fresh database on the PostgreSQL server of DATABASE_URL, or null (embedded in DATA_DIR). */
  databaseUrl: string | null;
  /** Removes DATA_DIR and drops the fresh database; call once every process using it has exited. */
  cleanup(): Promise<void>;
}

export async function freshServiceEnv(): Promise<ServiceEnv> {
  const dataDir = await mkdtemp(join(tmpdir(), "ascribe-cli-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    // As on a terminal: the banner on stdout (unset, a pipe would get JSON lines and the banner on stderr).
    LOG_FORMAT: "pretty",
    DATA_DIR: dataDir,
  };
  // The test runner's own marker must not leak into the service's processes.
  delete env.NODE_TEST_CONTEXT;
  delete env.SITE_URL;
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    delete env.DATABASE_URL;
    return {
      env,
      dataDir,
      databaseUrl: null,
      cleanup: () => rm(dataDir, { recursive: true, force: true, maxRetries: 3 }),
    };
  }
  const name = `ascribe_cli_${process.pid}_${randomUUID().slice(0, 8)}`;
  // Migrated already (the service's start finds nothing to migrate): postgres-template.ts.
  const template = await postgresTemplate(serverUrl);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${template}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  env.DATABASE_URL = url.toString();
  return {
    env,
    dataDir,
    databaseUrl: url.toString(),
    async cleanup() {
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      try {
        await dropper.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.end();
      }
      await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

export interface CliResult {
  /** The exit code; null when the process was killed (timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/ascribe.js ARGS` to its end; never rejects on a non-zero exit. */
export function runCli(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  timeoutMs = 60_000,
  bin = BIN,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        let code: number | null = 0;
        if (error) code = typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The parsed `--json` output of a command that must succeed. */
export async function cliJson<T>(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<T> {
  const r = await runCli(env, args);
  if (r.code !== 0) {
    throw new Error(
      `ascribe ${args.join(" ")} exited with ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  }
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`ascribe ${args.join(" ")} printed no JSON: ${JSON.stringify(r.stdout)}`);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /** The API base URL as printed (`http://localhost:PORT/api/v1`). */
  printedBaseUrl: string;
  /** The API base URL on HOST (127.0.0.1), independent of how `localhost` resolves. */
  baseUrl: string;
  /** The demo key, when this start printed one. */
  demoKey: string | null;
  exited: Promise<Exit>;
  /** Sends SIGTERM and waits for the exit; SIGKILL after `graceMs`. Safe to call more than once. */
  stop(graceMs?: number): Promise<Exit>;
}

function watchExit(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}

async function stopChild(child: ChildProcess, exited: Promise<Exit>, graceMs: number): Promise<Exit> {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      resolve();
    }, graceMs);
  });
  const exit = await Promise.race([exited, killed.then(() => exited)]);
  clearTimeout(timer);
  return exit;
}

/**
 * Spawns `ascribe serve` and waits for its start banner (rejects with its output if it exits first);
 * `bin`: another copy's bin/ascribe.js.
 */
export async function startServe(
  env: NodeJS.ProcessEnv,
  // A first start seeds the demo account; on a loaded 2-core machine that took up to two minutes.
  timeoutMs = 150_000,
  bin = BIN,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, "serve"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = watchExit(child);
  const stop = (graceMs = 20_000) => stopChild(child, exited, graceMs);

  const banner = await new Promise<{ base: string; demoKey: string | null }>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanupListeners();
      reject(
        new Error(`ascribe serve printed no banner within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`),
      );
    }, timeoutMs);
    const check = () => {
      // On stdout, or on stderr with LOG_FORMAT=json (stdout then carries log lines only).
      const printed = `${out}\n${err}`;
      const base = /^ {2}API base: (\S+)\r?\n/m.exec(printed);
      if (!base?.[1]) return;
      // The banner is one write; the demo key, when there is one, follows with its hint line.
      const demo = /^ {2}demo key: (\S+)\r?\n.*shown only this once/m.exec(printed);
      if (printed.includes("demo key:") && !demo) return;
      cleanupListeners();
      resolve({ base: base[1], demoKey: demo?.[1] ?? null });
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanupListeners();
      reject(
        new Error(
          `ascribe serve exited (${code ?? signal}) before its banner\nstdout: ${out}\nstderr: ${err}`,
        ),
      );
    };
    function cleanupListeners() {
      clearTimeout(timer);
      child.stdout?.off("data", check);
      child.stderr?.off("data", check);
      child.off("exit", onExit);
    }
    child.stdout?.on("data", check);
    child.stderr?.on("data", check);
    child.once("exit", onExit);
  }).catch(async (e: unknown) => {
    await stop(5_000);
    throw e;
  });

  const url = new URL(banner.base);
  url.hostname = "127.0.0.1";
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    printedBaseUrl: banner.base,
    baseUrl: url.toString().replace(/\/+$/, ""),
    demoKey: banner.demoKey,
    exited,
    stop,
  };
}

/** `GET {base}{path}` with the key as Bearer; the status and the parsed JSON body. */
export async function apiGet(
  baseUrl: string,
  path: string,
  key: string,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: response.status, body };
}
