import assert from "node:assert/strict";
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { rows } from "../../src/db/client.ts";
import { openDatabase } from "../../src/open-infrastructure.ts";
import {
  apiGet,
  backend,
  cliJson,
  freshServiceEnv,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

/*
 * Graceful stop: SIGTERM lets requests in flight finish, flushes the audit buffer, closes the
 * database and exits 0; a restart on the same data does not seed the demo account again.
 */

const TIMEOUT = { timeout: 240_000 };
const BURST = 25;

interface ListedKey {
  id: string;
  last_used_at: string | null;
}

/** Audit rows of one key, read on the database directly (no server is running). */
async function auditRows(env: NodeJS.ProcessEnv, accountId: string, keyId: string): Promise<number> {
  const db = await openDatabase(loadConfig(env));
  try {
    const found = await db.admin(accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from audit_log where account_id = ${accountId} and key_id = ${keyId}`,
      ),
    );
    return Number(found[0]?.n ?? 0);
  } finally {
    await db.close();
  }
}

/** Waits until `check` holds, polling; throws `message()` after `timeoutMs`. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, message: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a new TCP connection to the port is refused (the server stopped listening). */
function refusesConnections(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(port, host);
    probe.once("connect", () => {
      probe.destroy();
      resolve(false);
    });
    probe.once("error", () => resolve(true));
  });
}

/**
 * A raw HTTP/1.1 request held open across a signal: its headers carry `Expect: 100-continue`, so the
 * server's interim `100 Continue` proves the request reached the application; the body follows later.
 */
async function openHeldRequest(baseUrl: string, path: string, key: string, body: string) {
  const url = new URL(baseUrl);
  const socket: Socket = connect(Number(url.port), url.hostname);
  socket.setEncoding("utf8");
  let response = "";
  socket.on("data", (chunk: string) => {
    response += chunk;
  });
  const ended = new Promise<string>((resolve, reject) => {
    socket.once("end", () => resolve(response));
    socket.once("error", (err) => reject(new Error(`${err.message}; received so far: ${response}`)));
  });
  await once(socket, "connect");
  socket.write(
    `PUT ${url.pathname}${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      "Expect: 100-continue\r\nConnection: close\r\n\r\n",
  );
  await waitFor(
    () => response.includes("HTTP/1.1 100 Continue\r\n\r\n"),
    30_000,
    () => `no 100 Continue; received: ${JSON.stringify(response)}`,
  );
  return {
    /** What came after the interim response. */
    final: () => response.replace("HTTP/1.1 100 Continue\r\n\r\n", ""),
    /** Sends the body and resolves with the final status and parsed body. */
    async finish(): Promise<{ status: number; body: unknown }> {
      // No half-close: a client that ends its side is a client that went away.
      socket.write(body);
      const raw = (await ended).replace("HTTP/1.1 100 Continue\r\n\r\n", "");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      const text = raw.slice(raw.indexOf("\r\n\r\n") + 4);
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // kept as text for the assertion message
      }
      return { status, body: parsed };
    },
    destroy: () => socket.destroy(),
  };
}

describe(`ascribe serve stops gracefully (${backend} database)`, TIMEOUT, () => {
  let service: ServiceEnv | undefined;
  let server: ServeProcess | undefined;
  let accountId = "";
  let keyId = "";
  let key = "";
  const env = () => {
    if (!service) throw new Error("no service environment");
    return service.env;
  };

  before(async () => {
    service = await freshServiceEnv();
  }, TIMEOUT);

  after(async () => {
    try {
      await server?.stop(5_000);
    } finally {
      await service?.cleanup();
    }
  }, TIMEOUT);

  test("SIGTERM right after a burst of requests exits 0 with the audit buffer flushed", TIMEOUT, async () => {
    server = await startServe(env());
    assert.ok(server.demoKey, `the first start printed no demo key:\n${server.stdout()}`);
    const account = await cliJson<{ id: string }>(env(), [
      "accounts",
      "create",
      "--name",
      "Lifecycle",
      "--owner",
      "boss@lifecycle.test",
      "--json",
    ]);
    accountId = account.id;
    const created = await cliJson<{ id: string; key: string }>(env(), [
      "keys",
      "create",
      "--account",
      accountId,
      "--as",
      "boss@lifecycle.test",
      "--name",
      "burst",
      "--scopes",
      "read:icp,write:icp",
      "--json",
    ]);
    keyId = created.id;
    key = created.key;

    const burstStart = Date.now();
    const base = server.baseUrl;
    const results = await Promise.all(
      Array.from({ length: BURST }, () => apiGet(base, "/icp/criteria", key)),
    );
    server.child.kill("SIGTERM");
    assert.deepEqual(
      results.map((r) => r.status),
      Array.from({ length: BURST }, () => 200),
    );
    const exit = await server.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, `serve stderr: ${server.stderr()}`);

    // The server is gone: on the embedded database the CLI now opens DATA_DIR itself.
    const list = await cliJson<ListedKey[]>(env(), ["keys", "list", "--account", accountId, "--json"]);
    const listed = list.find((k) => k.id === keyId);
    assert.ok(listed?.last_used_at, `last_used_at not written before exit: ${JSON.stringify(list)}`);
    assert.ok(Date.parse(listed.last_used_at) >= burstStart, listed.last_used_at);
    assert.equal(await auditRows(env(), accountId, keyId), BURST);
  });

  test("a restart does not seed again; a request in flight at SIGTERM still completes", TIMEOUT, async () => {
    assert.ok(key, "the first test created no key");
    server = await startServe(env());
    assert.match(server.stdout(), /^ {2}API base: http:\/\/localhost:\d+\/api\/v1$/m);
    assert.equal(server.demoKey, null);
    assert.doesNotMatch(server.stdout(), /demo key/, server.stdout());

    // The key survived the restart.
    const again = await apiGet(server.baseUrl, "/icp/criteria", key);
    assert.equal(again.status, 200, JSON.stringify(again.body));

    // The headers are in and the request reached the application; its body has not been sent yet.
    const held = await openHeldRequest(
      server.baseUrl,
      "/icp",
      key,
      JSON.stringify({ icp: { industries: ["coaching", "B2B SaaS"] } }),
    );
    try {
      server.child.kill("SIGTERM");
      const url = new URL(server.baseUrl);
      await waitFor(
        () => refusesConnections(Number(url.port), url.hostname),
        30_000,
        () => "the server still accepts connections after SIGTERM",
      );
      // Stopped listening, yet still waiting for the request in flight.
      assert.equal(server.child.exitCode, null, `serve exited with a request in flight: ${server.stderr()}`);
      assert.equal(held.final(), "", "the request was answered before its body was sent");
      const sentAt = Date.now();
      const r = await held.finish();
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { data: { success: true } });

      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, `serve stderr: ${server.stderr()}`);

      const list = await cliJson<ListedKey[]>(env(), ["keys", "list", "--account", accountId, "--json"]);
      const listed = list.find((k) => k.id === keyId);
      assert.ok(listed?.last_used_at);
      assert.ok(
        Date.parse(listed.last_used_at) >= sentAt,
        `last_used_at ${listed.last_used_at} predates the request in flight`,
      );
      // The burst, the request after the restart and the one in flight.
      assert.equal(await auditRows(env(), accountId, keyId), BURST + 2);
    } finally {
      held.destroy();
    }
  });
});
