import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { Redis } from "ioredis";
import { z } from "zod";
import type { Database } from "../../src/db/client.ts";
import { rows } from "../../src/db/client.ts";
import { markOwner } from "../../src/http/barrier.ts";
import {
  type CounterStore,
  createMemoryCounterStore,
  createRedisCounterStore,
} from "../../src/http/rate-limiter.ts";
import { replaceIcpCriteria } from "../../src/queries/replace-icp-criteria.ts";
import { routes } from "../../src/routes/index.ts";
import { defineRoute, type RouteDef } from "../../src/routes/route-def.ts";
import {
  awayFromWindowEdge,
  bearer,
  createTestApp,
  openTestDatabase,
  seedAccount,
} from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

async function withApp<T>(
  fn: (app: Awaited<ReturnType<typeof createTestApp>>) => Promise<T>,
  options: Parameters<typeof createTestApp>[1] = {},
) {
  const app = await createTestApp(db, options);
  try {
    return await fn(app);
  } finally {
    await app.close();
    await app.audit.close();
  }
}

describe("key transport", () => {
  test("valid Bearer with a junk x-api-key → 200; junk Bearer with a valid x-api-key → 401", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(async (app) => {
      const good = await app.inject({
        url: "/api/v1/icp/criteria",
        headers: { authorization: `Bearer ${key}`, "x-api-key": "junk" },
      });
      assert.equal(good.statusCode, 200);
      const bad = await app.inject({
        url: "/api/v1/icp/criteria",
        headers: { authorization: "Bearer junk", "x-api-key": key },
      });
      assert.equal(bad.statusCode, 401);
      const viaHeader = await app.inject({ url: "/api/v1/icp/criteria", headers: { "x-api-key": key } });
      assert.equal(viaHeader.statusCode, 200);
    });
  });

  test("a key in the query string is never read", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(async (app) => {
      for (const name of ["api_key", "apikey", "key", "token", "access_token"]) {
        const res = await app.inject({ url: `/api/v1/icp/criteria?${name}=${key}` });
        assert.equal(res.statusCode, 401, name);
      }
    });
  });
});

describe("routing", () => {
  test("unknown route → 404 naming it; wrong method → 405; both without a key", async () => {
    await withApp(async (app) => {
      const unknown = await app.inject({ url: "/api/v1/nothing/here?x=1" });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json(), { error: "unknown_route", route: "/api/v1/nothing/here" });
      assert.equal(unknown.headers["cache-control"], "private, no-store");
      const wrong = await app.inject({ method: "DELETE", url: "/api/v1/icp/criteria" });
      assert.equal(wrong.statusCode, 405);
      assert.equal(wrong.json().error, "method_not_allowed");
      const getOnWrite = await app.inject({ method: "GET", url: "/api/v1/goals" });
      assert.equal(getOnWrite.statusCode, 405);
      assert.equal(getOnWrite.headers["x-ratelimit-limit"], "600");
    });
  });

  test("the index needs no key, with and without trailing slash, and lists every route", async () => {
    await withApp(async (app) => {
      for (const url of ["/api/v1", "/api/v1/"]) {
        const res = await app.inject({ url });
        assert.equal(res.statusCode, 200);
        const index = res.json().data;
        assert.equal(index.base_url, "http://localhost:3000/api/v1");
        assert.equal(index.reference, "http://localhost:3000/docs");
        assert.equal(index.openapi, "http://localhost:3000/api/v1/openapi.json");
        const listed = index.routes.map(
          (r: { method: string; path: string; scope: string }) => `${r.method} ${r.path} ${r.scope}`,
        );
        assert.deepEqual(listed, [
          "GET http://localhost:3000/api/v1/dashboard/kpis read:dashboard",
          "GET http://localhost:3000/api/v1/dashboard/daily read:dashboard",
          "GET http://localhost:3000/api/v1/dashboard/breakdowns read:dashboard",
          "GET http://localhost:3000/api/v1/icp/criteria read:icp",
          "PUT http://localhost:3000/api/v1/icp write:icp",
          "POST http://localhost:3000/api/v1/icp write:icp",
          "PUT http://localhost:3000/api/v1/goals write:goals",
          "POST http://localhost:3000/api/v1/goals write:goals",
          "PUT http://localhost:3000/api/v1/sale-rule write:settings",
          "POST http://localhost:3000/api/v1/sale-rule write:settings",
          "GET http://localhost:3000/api/v1/ads/spend read:ads",
          "GET http://localhost:3000/api/v1/ads/campaigns read:ads",
          "GET http://localhost:3000/api/v1/ads/rules read:ads",
          "GET http://localhost:3000/api/v1/ads/rules/runs read:ads",
          "POST http://localhost:3000/api/v1/ads/rules/enable write:ads",
          "PUT http://localhost:3000/api/v1/ads/rules/enable write:ads",
          "POST http://localhost:3000/api/v1/ads/rules/dry-run write:ads",
          "PUT http://localhost:3000/api/v1/ads/rules/dry-run write:ads",
          "POST http://localhost:3000/api/v1/ads/rules/delete write:ads",
          "GET http://localhost:3000/api/v1/events read:events",
          "GET http://localhost:3000/api/v1/events/summary read:events",
          "GET http://localhost:3000/api/v1/attribution read:attribution",
          "GET http://localhost:3000/api/v1/attribution/health read:attribution",
          "GET http://localhost:3000/api/v1/attribution/report read:attribution",
          "GET http://localhost:3000/api/v1/attribution/models read:attribution",
          "GET http://localhost:3000/api/v1/sales/summary read:sales",
          "GET http://localhost:3000/api/v1/sales/reps read:sales",
          "GET http://localhost:3000/api/v1/sales/cycle read:sales",
          "GET http://localhost:3000/api/v1/finance/pnl read:finance",
          "GET http://localhost:3000/api/v1/funnel read:funnel",
          "GET http://localhost:3000/api/v1/contacts read:contacts",
          "GET http://localhost:3000/api/v1/contacts/customers read:contacts",
          "GET http://localhost:3000/api/v1/contacts/purchases read:contacts",
          "GET http://localhost:3000/api/v1/contacts/calls read:calls",
          "GET http://localhost:3000/api/v1/calls read:calls",
          "GET http://localhost:3000/api/v1/calls/transcript read:calls",
          "GET http://localhost:3000/api/v1/calls/recording read:calls",
          "GET http://localhost:3000/api/v1/journeys read:journeys",
          "GET http://localhost:3000/api/v1/journeys/contact read:journeys",
          "GET http://localhost:3000/api/v1/touchpoints read:journeys",
          "GET http://localhost:3000/api/v1/creatives/requests read:creatives",
          "POST http://localhost:3000/api/v1/creatives/requests/ack write:creatives",
          "POST http://localhost:3000/api/v1/creatives/upload-url write:creatives",
          "POST http://localhost:3000/api/v1/creatives/import write:creatives",
          "GET http://localhost:3000/api/v1/capi/pixels read:capi",
        ]);
      }
      const reference = await app.inject({ url: "/api/v1/openapi.json" });
      assert.equal(reference.statusCode, 200);
      assert.equal(reference.json().openapi, "3.1.0");
      assert.deepEqual(Object.keys(reference.json().paths).sort(), [
        "/",
        "/ads/campaigns",
        "/ads/rules",
        "/ads/rules/delete",
        "/ads/rules/dry-run",
        "/ads/rules/enable",
        "/ads/rules/runs",
        "/ads/spend",
        "/attribution",
        "/attribution/health",
        "/attribution/models",
        "/attribution/report",
        "/calls",
        "/calls/recording",
        "/calls/transcript",
        "/capi/pixels",
        "/contacts",
        "/contacts/calls",
        "/contacts/customers",
        "/contacts/purchases",
        "/creatives/import",
        "/creatives/requests",
        "/creatives/requests/ack",
        "/creatives/upload-url",
        "/dashboard/breakdowns",
        "/dashboard/daily",
        "/dashboard/kpis",
        "/events",
        "/events/summary",
        "/finance/pnl",
        "/funnel",
        "/goals",
        "/icp",
        "/icp/criteria",
        "/journeys",
        "/journeys/contact",
        "/openapi.json",
        "/sale-rule",
        "/sales/cycle",
        "/sales/reps",
        "/sales/summary",
        "/tools",
        "/touchpoints",
      ]);
    });
  });

  test("CORS: every origin allowed, preflight answered", async () => {
    await withApp(async (app) => {
      const preflight = await app.inject({
        method: "OPTIONS",
        url: "/api/v1/icp",
        headers: {
          origin: "https://example.org",
          "access-control-request-method": "PUT",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers["access-control-allow-origin"], "*");
      assert.match(String(preflight.headers["access-control-allow-headers"]), /authorization/i);
      // A browser-based MCP client's preflight for /mcp.
      const mcp = await app.inject({
        method: "OPTIONS",
        url: "/mcp",
        headers: {
          origin: "https://agent.example.org",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type,mcp-protocol-version",
        },
      });
      assert.equal(mcp.statusCode, 204);
      assert.match(String(mcp.headers["access-control-allow-headers"]), /Mcp-Protocol-Version/);
      const res = await app.inject({
        url: "/api/v1/icp/criteria",
        headers: { origin: "https://example.org" },
      });
      assert.equal(res.headers["access-control-allow-origin"], "*");
    });
  });
});

describe("failed-authentication throttle", () => {
  test("more than 20 × 401 from one IP within the minute → 429 for that IP, even with a valid key", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(async (app) => {
      const from = (remoteAddress: string, headers: Record<string, string>) =>
        app.inject({ url: "/api/v1/icp/criteria", remoteAddress, headers });
      await awayFromWindowEdge(60_000);
      for (let i = 1; i <= 21; i++) {
        const res = await from("10.9.9.9", bearer(`svc_sk_live_${"x".repeat(32)}`));
        assert.equal(res.statusCode, 401, `attempt ${i}`);
      }
      const blocked = await from("10.9.9.9", bearer(key));
      assert.equal(blocked.statusCode, 429);
      assert.deepEqual(blocked.json(), { error: "too_many_failed_attempts", retry_after_seconds: 60 });
      assert.equal(blocked.headers["retry-after"], "60");
      const otherIp = await from("10.9.9.10", bearer(key));
      assert.equal(otherIp.statusCode, 200, "another IP is unaffected");
    });
  });

  test("20 failures are tolerated", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(async (app) => {
      for (let i = 0; i < 20; i++) {
        await app.inject({ url: "/api/v1/icp/criteria", remoteAddress: "10.8.8.8" });
      }
      const res = await app.inject({
        url: "/api/v1/icp/criteria",
        remoteAddress: "10.8.8.8",
        headers: bearer(key),
      });
      assert.equal(res.statusCode, 200);
    });
  });
});

/** Counters frozen mid-window, so 650 slow requests cannot straddle a window boundary. */
const frozenClock = () => Math.floor(Date.now() / 60_000) * 60_000 + 30_000;

function rateLimitSuite(
  name: string,
  makeCounters: () => Promise<CounterStore & { dispose(): Promise<void> }>,
) {
  test(`rate limit (${name}): 650 requests in one window → exactly 600 pass, 50 get 429`, async () => {
    const counters = await makeCounters();
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const other = await account.key(["read:icp"]);
    try {
      await withApp(
        async (app) => {
          const statuses: number[] = [];
          const remaining: number[] = [];
          for (let i = 0; i < 650; i++) {
            const res = await app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
            statuses.push(res.statusCode);
            remaining.push(Number(res.headers["x-ratelimit-remaining"]));
            if (res.statusCode === 429) {
              assert.deepEqual(res.json(), { error: "rate_limited", retry_after_seconds: 60 });
              assert.equal(res.headers["retry-after"], "60");
            }
          }
          assert.equal(statuses.filter((s) => s === 200).length, 600);
          assert.equal(statuses.filter((s) => s === 429).length, 50);
          assert.deepEqual(statuses.slice(598, 602), [200, 200, 429, 429]);
          assert.equal(remaining[0], 599);
          for (let i = 1; i < 600; i++)
            assert.ok(Number(remaining[i]) < Number(remaining[i - 1]), `Remaining decreases at ${i}`);
          assert.equal(remaining[599], 0);
          assert.ok(remaining.slice(600).every((r) => r === 0));
          const unaffected = await app.inject({ url: "/api/v1/icp/criteria", headers: bearer(other) });
          assert.equal(unaffected.statusCode, 200);
          assert.equal(unaffected.headers["x-ratelimit-remaining"], "599");
        },
        { counters },
      );
    } finally {
      await counters.dispose();
    }
  });
}

rateLimitSuite("memory", async () => {
  const at = frozenClock();
  return Object.assign(
    createMemoryCounterStore(() => at),
    { dispose: async () => {} },
  );
});

const redisUrl = process.env.REDIS_URL;
if (redisUrl) {
  rateLimitSuite("Redis", async () => {
    const redis = new Redis(redisUrl);
    const prefix = `test:pipeline:${process.pid}:${Date.now()}:`;
    const at = frozenClock();
    const store = createRedisCounterStore(redis, prefix, () => at);
    return Object.assign(store, {
      async dispose() {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      },
    });
  });
} else {
  test("rate limit (Redis)", { skip: process.env.CI === "true" ? false : "REDIS_URL not set" }, () => {
    assert.fail("CI=true requires REDIS_URL: the Redis leg must run");
  });
}

describe("validation and errors", () => {
  test("a bad body from an unauthenticated caller is a 401, not a 400", async () => {
    await withApp(async (app) => {
      const res = await app.inject({
        method: "PUT",
        url: "/api/v1/icp",
        headers: { "content-type": "application/json" },
        payload: "{not json",
      });
      assert.equal(res.statusCode, 401);
    });
  });

  test("bad JSON, wrong content type and oversized bodies → 400 with a message", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["write:icp"]);
    await withApp(async (app) => {
      const put = (payload: string, contentType = "application/json") =>
        app.inject({
          method: "PUT",
          url: "/api/v1/icp",
          headers: { ...bearer(key), "content-type": contentType },
          payload,
        });
      assert.deepEqual((await put("{not json")).json(), { error: "body is not valid JSON" });
      assert.deepEqual((await put("icp=1", "application/x-www-form-urlencoded")).json(), {
        error: "Content-Type must be application/json",
      });
      const big = await put(JSON.stringify({ icp: { blob: "x".repeat(1_100_000) } }));
      assert.equal(big.statusCode, 400);
      assert.deepEqual(big.json(), { error: "request body exceeds 1048576 bytes" });
      assert.deepEqual((await put("[1,2]")).json(), { error: "missing icp object" });
    });
  });

  const boom = defineRoute({
    methods: ["GET"],
    path: "/test/boom",
    scope: "read:icp",
    input: z.object({ n: z.coerce.number().int().min(1, "must be at least 1").optional() }),
    description: "test route that fails",
    handler: async () => {
      throw new Error("connection to 10.0.0.5 failed: password authentication failed for user admin");
    },
  });

  test("an internal failure → 502 upstream_error without internals; validation names the parameter", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(
      async (app) => {
        const res = await app.inject({ url: "/api/v1/test/boom", headers: bearer(key) });
        assert.equal(res.statusCode, 502);
        assert.equal(res.body, JSON.stringify({ error: "upstream_error" }));
        assert.equal(res.headers["cache-control"], "private, no-store");
        const invalid = await app.inject({ url: "/api/v1/test/boom?n=0", headers: bearer(key) });
        assert.equal(invalid.statusCode, 400);
        assert.deepEqual(invalid.json(), { error: "n: must be at least 1" });
      },
      { routes: [...routes, boom] },
    );
  });
});

describe("tenant barrier", () => {
  test("a foreign row reaching the response → 500 tenant_barrier, nothing of it sent", async () => {
    const victim = await seedAccount(db);
    await db.admin(victim.accountId, (tx) =>
      replaceIcpCriteria(tx, victim.accountId, { criteria: { secret_sauce: "VICTIM-ONLY-7731" } }),
    );
    // The seam: a route handing out another account's row, read past RLS as the owner, the way a
    // query that forgot its tenant would.
    const found = await db.admin(victim.accountId, (tx) =>
      rows<{ account_id: string; criteria: Record<string, unknown> }>(
        tx,
        sql`select account_id, criteria from icp_criteria where account_id = ${victim.accountId}`,
      ),
    );
    const row = found[0];
    if (!row) throw new Error("seed missing");
    const leaky: RouteDef = defineRoute({
      methods: ["GET"],
      path: "/test/leaky",
      scope: "read:icp",
      input: z.object({}),
      description: "test route that leaks",
      handler: async () => [{ ok: true }, { nested: [markOwner(row.criteria, row.account_id)] }],
    });
    const attacker = await seedAccount(db);
    const key = await attacker.key(["read:icp"]);
    await withApp(
      async (app) => {
        const res = await app.inject({ url: "/api/v1/test/leaky", headers: bearer(key) });
        assert.equal(res.statusCode, 500);
        assert.deepEqual(res.json(), { error: "tenant_barrier" });
        assert.ok(!res.body.includes("VICTIM-ONLY-7731"));
        assert.ok(!res.body.includes(victim.accountId));
      },
      { routes: [...routes, leaky] },
    );
  });
});
