import assert from "node:assert/strict";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { type Database, openPostgres } from "../../src/db/client.ts";
import { routes } from "../../src/routes/index.ts";
import { defineRoute } from "../../src/routes/route-def.ts";
import { backend, bearer, createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

// PGlite runs inside this process: it cannot go away, and (one WASM thread) cannot interrupt a
// running statement. Both behaviours belong to the PostgreSQL back-end.
const skip = backend === "postgres" ? false : "PostgreSQL only (DATABASE_URL)";

/** A TCP relay in front of PostgreSQL that the test can cut and restore, as an outage would. */
function relay(target: URL) {
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  return {
    async start(port = 0): Promise<number> {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      const listening = server;
      await new Promise<void>((resolve) => listening.listen(port, "127.0.0.1", () => resolve()));
      const address = listening.address();
      return typeof address === "object" && address ? address.port : port;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      const closing = server;
      server = null;
      if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
}

describe("PostgreSQL failures", { skip }, () => {
  let db: Database & { url: string | null };
  before(async () => {
    db = await openTestDatabase();
  });
  after(async () => {
    await db?.close();
  });

  test("a database outage answers 502 upstream_error, and the service recovers when it returns", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    if (!db.url) throw new Error("no url");
    const target = new URL(db.url);
    const proxy = relay(target);
    const port = await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(port);
    const proxied = await openPostgres(viaProxy.toString(), 5_000);
    const app = await createTestApp(proxied);
    try {
      const ask = () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      assert.equal((await ask()).statusCode, 200);
      await proxy.stop();
      const down = await ask();
      assert.equal(down.statusCode, 502);
      assert.deepEqual(down.json(), { error: "upstream_error" });
      await proxy.start(port);
      assert.equal((await ask()).statusCode, 200, "recovered");
    } finally {
      await app.close();
      await app.audit.close().catch(() => {});
      await proxy.stop();
      await proxied.close();
    }
  });

  test("a runaway statement is cut by the statement timeout: 502, not a hung request", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    if (!db.url) throw new Error("no url");
    const short = await openPostgres(db.url, 300);
    const slow = defineRoute({
      methods: ["GET"],
      path: "/test/slow",
      scope: "read:icp",
      input: z.object({}),
      description: "a runaway query",
      handler: async ({ tx }) => {
        await tx.execute(sql`select pg_sleep(5)`);
        return {};
      },
    });
    const app = await createTestApp(short, { routes: [...routes, slow] });
    try {
      const started = Date.now();
      const res = await app.inject({ url: "/api/v1/test/slow", headers: bearer(key) });
      assert.equal(res.statusCode, 502);
      assert.deepEqual(res.json(), { error: "upstream_error" });
      assert.ok(Date.now() - started < 4_000, "cut well before the 5 s sleep ends");
    } finally {
      await app.close();
      await app.audit.close();
      await short.close();
    }
  });
});
