import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Database, openPostgres } from "../../src/db/client.ts";
import { backend, bearer, createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

// A frozen server belongs to PostgreSQL (PGlite runs inside this process): the embedded leg skips
// it, and CI's PostgreSQL leg (.ci/run sets DATABASE_URL) runs it.
const skip = backend === "postgres" ? false : "PostgreSQL only (DATABASE_URL)";

// Small, but far above what a query takes on a loaded test machine (a warm request: ~300 ms).
const QUERY_TIMEOUT_MS = 1_500;
const CONNECT_TIMEOUT_MS = 1_000;
/** What else a request spends around its query (scheduling on a loaded machine). */
const SLACK_MS = 1_000;

describe("PostgreSQL frozen", { skip }, () => {
  let db: Database & { url: string | null };
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => {
    await db?.close();
  });

  /**
   * The app over a relay with small limits; the statement timeout far above them (useless when
   * frozen). A frozen relay is a SIGSTOPped server or a dead network path: connections stay open
   * (and new ones are accepted) but nothing is forwarded.
   */
  async function appBehindRelay() {
    if (!db.url) throw new Error("no url");
    const server = new URL(db.url);
    const relay = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const viaRelay = new URL(db.url);
    viaRelay.hostname = "127.0.0.1";
    viaRelay.port = String(relay.port);
    const proxied = await openPostgres(viaRelay.toString(), 30_000, {
      queryTimeoutMs: QUERY_TIMEOUT_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    });
    const app = await createTestApp(proxied);
    return {
      relay,
      app,
      async close() {
        await relay.restore();
        await app.close();
        await app.audit.close().catch(() => {});
        await proxied.close();
        await relay.close();
      },
    };
  }

  async function timed(run: () => Promise<{ statusCode: number; json(): unknown }>) {
    const started = performance.now();
    const res = await run();
    return { status: res.statusCode, body: res.json(), ms: performance.now() - started };
  }

  test("a query on a frozen server answers 502 upstream_error within the query timeout; thawed, the pool recovers", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const { relay, app, close } = await appBehindRelay();
    try {
      const ask = () => timed(() => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) }));
      assert.equal((await ask()).status, 200, "warm: the pool holds a connection");
      relay.freeze();
      const frozen = await ask();
      assert.equal(frozen.status, 502);
      assert.deepEqual(frozen.body, { error: "upstream_error" });
      // One query's timeout, no rollback waiting as long again behind it.
      assert.ok(frozen.ms >= QUERY_TIMEOUT_MS - 50, `answered after ${frozen.ms} ms`);
      assert.ok(frozen.ms < QUERY_TIMEOUT_MS + SLACK_MS, `answered after ${frozen.ms} ms`);
      // Still frozen: the timed-out connection was destroyed, not pooled; a new one cannot start.
      const again = await ask();
      assert.equal(again.status, 502);
      assert.ok(again.ms < QUERY_TIMEOUT_MS + CONNECT_TIMEOUT_MS + SLACK_MS, `answered after ${again.ms} ms`);
      await relay.restore();
      for (let i = 0; i < 3; i += 1) assert.equal((await ask()).status, 200, `request ${i} after the thaw`);
    } finally {
      await close();
    }
  });

  test("a server frozen before the first connection answers 502 within the connect timeout", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const { relay, app, close } = await appBehindRelay();
    try {
      relay.freeze();
      const ask = () => timed(() => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) }));
      const frozen = await ask();
      assert.equal(frozen.status, 502);
      assert.deepEqual(frozen.body, { error: "upstream_error" });
      assert.ok(frozen.ms >= CONNECT_TIMEOUT_MS - 50, `answered after ${frozen.ms} ms`);
      assert.ok(frozen.ms < CONNECT_TIMEOUT_MS + SLACK_MS, `answered after ${frozen.ms} ms`);
      assert.ok(relay.accepted >= 1, "the connection was opened, then never answered");
      await relay.restore();
      assert.equal((await ask()).status, 200, "thawed");
    } finally {
      await close();
    }
  });
});
