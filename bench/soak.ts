/**
 * `npm run bench -- soak`: the memory a running `ascribe serve` holds under a steady mixed load and
 * after it. The real service is spawned on a fresh embedded DATA_DIR (the default deployment), loaded
 * for SOAK_SECONDS with API reads (rotating keys, so the per-key limit is not what is measured) and
 * beacons, then left idle for SOAK_IDLE_SECONDS. Its resident set (VmRSS) and, through a preloaded
 * probe, V8's heap figures are sampled every few seconds. See bench/README.md, "Soak".
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEMO_OWNER } from "../src/admin/demo.ts";
import { envInt, fmt, machineInfo, median, pad, writeResults } from "./support.ts";

const run = promisify(execFile);
const ROOT = new URL("..", import.meta.url).pathname;
const BIN = join(ROOT, "bin", "ascribe.js");
const SOAK_SECONDS = envInt("SOAK_SECONDS", 300, 10);
const IDLE_SECONDS = envInt("SOAK_IDLE_SECONDS", 60, 5);
const KEYS = envInt("SOAK_KEYS", 8, 1);
const SAMPLE_MS = 5_000;

interface Sample {
  at: number;
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}

/** Written into the child with --import: V8's own figures, one JSON line on stderr per sample. */
const PROBE = `
import { writeSync } from "node:fs";
setInterval(() => {
  const m = process.memoryUsage();
  writeSync(2, "SOAK " + JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external }) + "\\n");
}, ${SAMPLE_MS}).unref();
`;

const MiB = 2 ** 20;

/** autocannon 8 ships no typings: the part used here (see load.ts). */
interface Request {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: Request) => Request;
}
interface Run {
  requests: { total: number };
  non2xx: number;
  latency: { p99: number };
}
const autocannon = createRequire(import.meta.url)("autocannon") as (options: {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  requests: Request[];
}) => Promise<Run>;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

async function cliJson<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, [BIN, ...args, "--json"], { env, cwd: ROOT });
  return JSON.parse(stdout) as T;
}

function waitForListening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const site = /site:\s+(http:\/\/\S+)/.exec(out)?.[1];
      if (site) resolve(site.replace(/\/$/, ""));
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`ascribe serve exited (${code}) before listening: ${out}`)),
    );
  });
}

function beaconBody(clientKey: string, n: number): string {
  const visitor = (n % 5000).toString(36).padStart(6, "0");
  const base = {
    client_key: clientKey,
    id: `soak-beacon-${n.toString(36).padStart(12, "0")}`,
    visitor_id: `v-${visitor}`,
    session_id: `s-${visitor}-${Math.floor(n / 40)}`,
  };
  if (n % 10 === 9) {
    return JSON.stringify({
      type: "form_submit",
      ...base,
      url: "https://shop.example/apply",
      contact: { email: `soak${n % 2000}@example.com`, first_name: "Soak" },
    });
  }
  return JSON.stringify({
    type: "page_view",
    ...base,
    url: `https://shop.example/landing/${n % 13}?utm_source=facebook&utm_medium=paid`,
    utm: { source: "facebook", medium: "paid", campaign: "Soak" },
  });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(os.tmpdir(), "ascribe-soak-"));
  const probe = join(dataDir, "..", `ascribe-soak-probe-${process.pid}.mjs`);
  writeFileSync(probe, PROBE);
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  try {
    // The demo account the first start would seed, and keys enough that the per-key limit
    // (600 a minute) never answers instead of the queries.
    const demo = await cliJson<{ account_id: string; client_key: string; key: string }>(env, ["demo"]);
    const keys = [demo.key];
    for (let i = 1; i < KEYS; i += 1) {
      const k = await cliJson<{ key: string }>(env, [
        "keys",
        "create",
        "--account",
        demo.account_id,
        "--as",
        DEMO_OWNER,
        "--name",
        `soak ${i}`,
        "--scopes",
        "*",
      ]);
      keys.push(k.key);
    }

    const child = spawn(process.execPath, [BIN, "serve"], {
      cwd: ROOT,
      env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ""} --import=${probe}`.trim() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const samples: Sample[] = [];
    let phase = "start";
    const phases: Record<string, Sample[]> = {};
    child.stderr.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) {
        if (!line.startsWith("SOAK ") || child.pid === undefined) continue;
        const v8 = JSON.parse(line.slice(5)) as { heapUsed: number; heapTotal: number; external: number };
        const sample = {
          at: Date.now(),
          rssMiB: rssMiB(child.pid),
          heapUsedMiB: v8.heapUsed / MiB,
          heapTotalMiB: v8.heapTotal / MiB,
          externalMiB: v8.external / MiB,
        };
        samples.push(sample);
        const list = phases[phase] ?? [];
        list.push(sample);
        phases[phase] = list;
      }
    });
    const site = await waitForListening(child);
    console.log(`service on ${site} (pid ${child.pid}); settling 20 s`);
    await new Promise((r) => setTimeout(r, 20_000));

    phase = "load";
    const paths = [
      "/api/v1/dashboard/kpis",
      "/api/v1/events?limit=100",
      "/api/v1/attribution/report",
      "/api/v1/contacts",
      "/api/v1/calls",
      "/api/v1/ads/spend",
      "/api/v1/sales/reps",
      "/api/v1/icp/criteria",
    ];
    let requestNo = 0;
    let beaconNo = 0;
    const [api, beacons] = await Promise.all([
      autocannon({
        url: site,
        connections: 4,
        duration: SOAK_SECONDS,
        requests: paths.map((path) => ({
          method: "GET" as const,
          path,
          setupRequest: (request: Request) => {
            requestNo += 1;
            const headers = { ...request.headers, authorization: `Bearer ${keys[requestNo % keys.length]}` };
            return { ...request, headers };
          },
        })),
      }),
      autocannon({
        url: `${site}/api/collect`,
        connections: 1,
        // Collect's per-IP limit is 600 a minute: stay under it.
        overallRate: 9,
        duration: SOAK_SECONDS,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            setupRequest: (request: Request) => {
              beaconNo += 1;
              return { ...request, body: beaconBody(demo.client_key, beaconNo) };
            },
          },
        ],
      }),
    ]);
    phase = "idle";
    console.log(
      `load: ${api.requests.total} API requests (${api.non2xx} not 2xx), ${beacons.requests.total} beacons (${beacons.non2xx} not 2xx); idle ${IDLE_SECONDS} s`,
    );
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));

    const last = (list: Sample[] | undefined) => list?.at(-1);
    const peak = (list: Sample[] | undefined) => Math.max(...(list ?? []).map((s) => s.rssMiB));
    const before = last(phases.start);
    const afterLoad = last(phases.load);
    const afterIdle = last(phases.idle);
    const row = (label: string, s: Sample | undefined) =>
      console.log(
        `${label.padEnd(22)}${pad(fmt(s?.rssMiB ?? Number.NaN, 0), 8)}${pad(fmt(s?.heapUsedMiB ?? Number.NaN, 0), 11)}${pad(fmt(s?.heapTotalMiB ?? Number.NaN, 0), 12)}${pad(fmt(s?.externalMiB ?? Number.NaN, 0), 10)}`,
      );
    console.log(
      `${"MiB".padEnd(22)}${pad("RSS", 8)}${pad("heap used", 11)}${pad("heap total", 12)}${pad("external", 10)}`,
    );
    row("before load", before);
    row("end of load", afterLoad);
    row(`after ${IDLE_SECONDS} s idle`, afterIdle);
    console.log(
      `peak RSS under load: ${fmt(peak(phases.load), 0)} MiB; median under load ${fmt(median((phases.load ?? []).map((s) => s.rssMiB)), 0)} MiB`,
    );
    const timestamp = new Date().toISOString();
    const file = writeResults("soak", timestamp, {
      suite: "soak",
      timestamp,
      machine: machineInfo(),
      settings: {
        soakSeconds: SOAK_SECONDS,
        idleSeconds: IDLE_SECONDS,
        keys: KEYS,
        nodeOptions: env.NODE_OPTIONS ?? "",
      },
      load: {
        apiRequests: api.requests.total,
        apiNon2xx: api.non2xx,
        apiP99Ms: api.latency.p99,
        beacons: beacons.requests.total,
        beaconsNon2xx: beacons.non2xx,
      },
      rssMiB: {
        before: before?.rssMiB,
        endOfLoad: afterLoad?.rssMiB,
        afterIdle: afterIdle?.rssMiB,
        peak: peak(phases.load),
      },
      samples,
    });
    console.log(`results: ${file}`);
  } finally {
    rmSync(probe, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
