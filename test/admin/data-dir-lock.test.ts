import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  adminSocketPath,
  answerBusy,
  callAdminSocket,
  DataDirBusyError,
  lockDataDir,
  releaseDataDir,
} from "../../src/admin/admin-socket.ts";

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "ascribe-lock-"));
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

test("one holder at a time; others reach the holder through the socket", async () => {
  const first = await lockDataDir(dataDir, async (request) => ({
    ok: true,
    result: { echoed: request.command },
  }));
  await assert.rejects(lockDataDir(dataDir, answerBusy), DataDirBusyError);
  assert.deepEqual(await callAdminSocket(dataDir, "keys.list", {}), {
    ok: true,
    result: { echoed: "keys.list" },
  });
  await releaseDataDir(first);
  assert.equal(await callAdminSocket(dataDir, "keys.list", {}), null, "nobody holds it any more");
  const second = await lockDataDir(dataDir, answerBusy);
  assert.deepEqual(await callAdminSocket(dataDir, "keys.list", {}), {
    ok: false,
    error: "another ascribe command is using the embedded database; try again",
  });
  await releaseDataDir(second);
});

test("a socket left by a process that died does not hold DATA_DIR", async () => {
  const path = adminSocketPath(dataDir);
  // A process binds the socket and is killed outright: the file stays, nobody answers.
  const child = spawn(process.execPath, [
    "-e",
    `require("node:net").createServer().listen(${JSON.stringify(path)}, () => console.log("bound"))`,
  ]);
  await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("exit", resolve));
  assert.ok(existsSync(path), "the stale socket file is there");
  const lock = await lockDataDir(dataDir, answerBusy);
  await releaseDataDir(lock);
});
