/**
 * `npm run bench [-- SUITE…]`: runs each benchmark suite in its own process, one after the other
 * (they are CPU-bound and must not share the machine), and stops at the first that fails.
 * Each suite prints its figures and writes `bench/results/<suite>-<timestamp>.json` and
 * `<suite>-latest.json`. See bench/README.md.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** In the order `npm run bench` runs them. */
const SUITES = [
  "pipeline",
  "tenant-context",
  "import",
  "import-live",
  "collect",
  "demo",
  "tracker",
  "reports",
  "app",
  "soak",
  "webhooks",
  "spend-sync",
] as const;

const asked = process.argv.slice(2);
const unknown = asked.filter((s) => !(SUITES as readonly string[]).includes(s));
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(", ")}; suites: ${SUITES.join(", ")}`);
  process.exit(2);
}
const chosen = asked.length > 0 ? asked : SUITES.filter((s) => existsSync(suiteFile(s)));

function suiteFile(suite: string): string {
  return fileURLToPath(new URL(`./${suite}.ts`, import.meta.url));
}

for (const suite of chosen) {
  console.log(`\n=== bench: ${suite} ===`);
  const run = spawnSync(process.execPath, ["--import", "tsx", suiteFile(suite)], { stdio: "inherit" });
  if (run.status !== 0) {
    console.error(`bench ${suite} failed (exit ${run.status ?? run.signal})`);
    process.exit(1);
  }
}
