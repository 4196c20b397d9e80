// Whether dist/ holds a compilation of the current src/: read by bin/ascribe.js on every start, so it
// is plain JavaScript (no transpiler loaded yet) and costs a few milliseconds of stat calls.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Written last by scripts/build.js: `{"sourcesAsOf": <ms>}`, the time the compilation started. */
export const STAMP_NAME = ".build-stamp.json";

/** Besides src/, what changes the output: the compiler options and the version it prints. */
const INPUTS = ["package.json", "tsconfig.json", "tsconfig.build.json"];

function stampTime(root) {
  try {
    const stamp = JSON.parse(readFileSync(join(root, "dist", STAMP_NAME), "utf8"));
    return typeof stamp.sourcesAsOf === "number" ? stamp.sourcesAsOf : null;
  } catch {
    return null;
  }
}

/**
 * A directory's own mtime moves when an entry is added, removed or renamed (a rename keeps the
 * file's mtime), so directories are compared as well as files.
 */
function newerThan(path, time) {
  const stat = statSync(path);
  if (stat.mtimeMs > time) return true;
  if (!stat.isDirectory()) return false;
  return readdirSync(path).some((name) => newerThan(join(path, name), time));
}

/** "current", "stale" (a source changed after the build started) or "absent" (never built). */
export function buildState(root = ROOT) {
  const time = stampTime(root);
  if (time === null) return "absent";
  const changed = ["src", ...INPUTS].some((name) => {
    try {
      return newerThan(join(root, name), time);
    } catch {
      // Absent (a package shipped with dist/ alone): nothing there to be newer than the build.
      return false;
    }
  });
  return changed ? "stale" : "current";
}
