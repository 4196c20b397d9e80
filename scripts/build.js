// Compiles src/ into dist/ once, so that `ascribe` and the server start without a transpiler.
// `npm install` runs it (`prepare`), `npm start` runs it with --if-stale; type errors are the job of
// `npm run typecheck` (tsconfig.build.json sets noCheck: emitting alone takes a few seconds).
import { spawnSync } from "node:child_process";
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildState, ROOT, STAMP_NAME } from "../bin/build-state.js";

const DIST = join(ROOT, "dist");
const stamp = join(DIST, STAMP_NAME);

if (process.argv.includes("--if-stale") && buildState() === "current") process.exit(0);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  // An install without devDependencies: ascribe still runs, from its sources through tsx.
  process.stderr.write("ascribe build: typescript is not installed; ascribe will run src/ through tsx\n");
  process.exit(0);
}

const started = Date.now();
// Without the stamp, a process starting during the build takes the sources, not half a build.
rmSync(stamp, { force: true });
const compiled = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
  cwd: ROOT,
  stdio: "inherit",
});
if (compiled.status !== 0) {
  process.stderr.write("ascribe build: tsc failed; ascribe will run src/ through tsx\n");
  process.exit(compiled.status ?? 1);
}
// Files the code reads next to itself (import.meta.url) that tsc does not emit.
cpSync(join(ROOT, "src", "web", "assets"), join(DIST, "web", "assets"), { recursive: true });
// The migrated embedded database a fresh DATA_DIR starts from (src/db/embedded-template.ts).
const { writeShippedTemplate } = await import(pathToFileURL(join(DIST, "db", "embedded-template.js")).href);
await writeShippedTemplate(DIST);
writeFileSync(stamp, `${JSON.stringify({ sourcesAsOf: started })}\n`);
process.stdout.write(`ascribe build: src/ compiled into dist/ in ${Date.now() - started} ms\n`);
