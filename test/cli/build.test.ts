import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { buildState } from "../../bin/build-state.js";
import {
  apiGet,
  freshServiceEnv,
  ROOT,
  runCli,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

/*
 * The built package: `npm install` compiles src/ into dist/, and bin/ascribe.js runs dist/ only while
 * it is a build of the current sources (else src/ through tsx, never stale code).
 */

const run = promisify(execFile);
const TIMEOUT = { timeout: 300_000 };
const BUILT_AT = new Date("2026-01-01T12:00:00Z");
const LATER = new Date("2026-01-01T12:00:05Z");

/** A repository-shaped tree: src/ with a nested file, the inputs, and dist/ stamped as built at BUILT_AT. */
async function builtTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "ascribe-build-"));
  await mkdir(join(root, "src", "cli"), { recursive: true });
  await mkdir(join(root, "dist"), { recursive: true });
  await writeFile(join(root, "src", "cli", "main.ts"), "export {};\n");
  await writeFile(join(root, "package.json"), "{}\n");
  await writeFile(join(root, "tsconfig.json"), "{}\n");
  const before = new Date(BUILT_AT.getTime() - 60_000);
  for (const path of ["src/cli/main.ts", "src/cli", "src", "package.json", "tsconfig.json"]) {
    await utimes(join(root, path), before, before);
  }
  await writeFile(
    join(root, "dist", ".build-stamp.json"),
    JSON.stringify({ sourcesAsOf: BUILT_AT.getTime() }),
  );
  return root;
}

describe("whether dist/ is a build of the current src/", () => {
  const roots: string[] = [];
  const tree = async () => {
    const root = await builtTree();
    roots.push(root);
    return root;
  };
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  test("no stamp: absent", async () => {
    const root = await tree();
    await rm(join(root, "dist", ".build-stamp.json"));
    assert.equal(buildState(root), "absent");
  });

  test("every source older than the build: current", async () => {
    assert.equal(buildState(await tree()), "current");
  });

  test("a source edited after the build: stale", async () => {
    const root = await tree();
    await utimes(join(root, "src", "cli", "main.ts"), LATER, LATER);
    assert.equal(buildState(root), "stale");
  });

  test("a file renamed after the build (its own mtime kept): stale, by its directory", async () => {
    const root = await tree();
    await rename(join(root, "src", "cli", "main.ts"), join(root, "src", "cli", "entry.ts"));
    assert.equal(buildState(root), "stale");
  });

  test("package.json changed after the build (the version --version prints): stale", async () => {
    const root = await tree();
    await utimes(join(root, "package.json"), LATER, LATER);
    assert.equal(buildState(root), "stale");
  });
});

/**
 * A private copy of what a clone holds at run time, built the way `npm install` (prepare) builds it:
 * other work on this tree cannot make its dist/ stale half-way through the test.
 */
async function builtCopy(): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "ascribe-package-"));
  for (const path of ["src", "bin", "scripts", "migrations", "tracker"]) {
    await cp(join(ROOT, path), join(copy, path), { recursive: true });
  }
  for (const file of ["package.json", "tsconfig.json", "tsconfig.build.json"]) {
    await cp(join(ROOT, file), join(copy, file));
  }
  await symlink(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  await run(process.execPath, [join(copy, "scripts", "build.js")], { cwd: copy });
  return copy;
}

describe("the built package", TIMEOUT, () => {
  let copy: string | undefined;
  let service: ServiceEnv | undefined;
  let server: ServeProcess | undefined;
  const bin = () => {
    if (!copy) throw new Error("no built copy");
    return join(copy, "bin", "ascribe.js");
  };

  before(async () => {
    copy = await builtCopy();
    service = await freshServiceEnv();
  }, TIMEOUT);

  after(async () => {
    await server?.stop();
    await service?.cleanup();
    if (copy) await rm(copy, { recursive: true, force: true });
  }, TIMEOUT);

  test("the build is current and --version prints package.json's version", TIMEOUT, async () => {
    assert.ok(copy && service);
    assert.equal(buildState(copy), "current");
    const r = await runCli(service.env, ["--version"], 60_000, bin());
    assert.deepEqual(r, { code: 0, stdout: "0.1.0\n", stderr: "" });
  });

  test("the built server starts from dist/ and answers with the demo key it printed", TIMEOUT, async () => {
    assert.ok(copy && service);
    // Without tsx the copy can only run what was compiled: the proof that dist/ is what runs.
    await rm(join(copy, "src"), { recursive: true });
    server = await startServe(service.env, 150_000, bin());
    assert.ok(server.demoKey, server.stdout());
    const r = await apiGet(server.baseUrl, "/icp/criteria", server.demoKey);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});
