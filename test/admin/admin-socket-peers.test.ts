import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  type AdminResponder,
  adminSocketPath,
  callAdminSocket,
  lockDataDir,
  releaseDataDir,
} from "../../src/admin/admin-socket.ts";
import { adminTokenPath } from "../../src/admin/admin-token.ts";

/*
 * The admin socket in one process: its mode whatever the umask, and the proof of the sender's user
 * it asks for before anything runs. The refusal of another user's process is in local-security.test.ts.
 */

const REFUSED = {
  ok: false,
  error: "refused: admin commands are taken only from the user running the server, or root",
};

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "ascribe-peers-"));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o7777;

/** A responder that records what reached it. */
function recording() {
  const seen: string[] = [];
  const respond: AdminResponder = async (request) => {
    seen.push(request.command);
    return { ok: true, result: "ran" };
  };
  return { seen, respond };
}

/** Sends one raw request line (any token, or none) and returns the parsed reply. */
function rawRequest(dataDir: string, request: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(adminSocketPath(dataDir));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("end", () => resolve(JSON.parse(text)));
    socket.on("error", reject);
  });
}

test("under umask 0 the socket is 0600, the token 0600 and a new DATA_DIR 0700", async () => {
  const dataDir = join(scratch, "new", "data");
  const previous = process.umask(0);
  let lock: Awaited<ReturnType<typeof lockDataDir>>;
  try {
    lock = await lockDataDir(dataDir, recording().respond);
  } finally {
    process.umask(previous);
  }
  try {
    assert.equal(await modeOf(adminSocketPath(dataDir)), 0o600);
    assert.equal(await modeOf(adminTokenPath(dataDir)), 0o600);
    assert.equal(await modeOf(dataDir), 0o700);
    assert.match(await readFile(adminTokenPath(dataDir), "utf8"), /^[A-Za-z0-9_-]{43}\n$/);
  } finally {
    await releaseDataDir(lock);
  }
});

test("a request without the token, or with another, is refused and runs nothing", async () => {
  const dataDir = join(scratch, "proof");
  const { seen, respond } = recording();
  const refusals: number[] = [];
  const lock = await lockDataDir(dataDir, respond, { onRefused: () => refusals.push(1) });
  try {
    const command = { command: "keys.create", args: { scopes: ["*"] } };
    assert.deepEqual(await rawRequest(dataDir, command), REFUSED);
    assert.deepEqual(await rawRequest(dataDir, { ...command, token: "" }), REFUSED);
    assert.deepEqual(await rawRequest(dataDir, { ...command, token: "a".repeat(43) }), REFUSED);
    assert.deepEqual(await rawRequest(dataDir, { ...command, token: { toString: 1 } }), REFUSED);
    assert.deepEqual(seen, [], "nothing reached the responder");
    assert.equal(refusals.length, 4, "every refusal was told");
    // The same user reads the token and is let in.
    assert.deepEqual(await callAdminSocket(dataDir, "keys.list", {}), { ok: true, result: "ran" });
    assert.deepEqual(seen, ["keys.list"]);
  } finally {
    await releaseDataDir(lock);
  }
});

test("a token others could read proves nothing: refused, then replaced by the next holder", async () => {
  const dataDir = join(scratch, "leaked");
  const { seen, respond } = recording();
  const first = await lockDataDir(dataDir, respond);
  const leaked = (await readFile(adminTokenPath(dataDir), "utf8")).trim();
  await chmod(adminTokenPath(dataDir), 0o644);
  try {
    assert.deepEqual(await rawRequest(dataDir, { command: "keys.list", args: {}, token: leaked }), REFUSED);
    assert.deepEqual(await callAdminSocket(dataDir, "keys.list", {}), REFUSED);
    assert.deepEqual(seen, []);
  } finally {
    await releaseDataDir(first);
  }
  const second = await lockDataDir(dataDir, respond);
  try {
    const fresh = (await readFile(adminTokenPath(dataDir), "utf8")).trim();
    assert.notEqual(fresh, leaked, "a token others could read is replaced, not narrowed");
    assert.equal(await modeOf(adminTokenPath(dataDir)), 0o600);
    assert.deepEqual(await rawRequest(dataDir, { command: "keys.list", args: {}, token: leaked }), REFUSED);
    assert.deepEqual(await callAdminSocket(dataDir, "keys.list", {}), { ok: true, result: "ran" });
  } finally {
    await releaseDataDir(second);
  }
});
