import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { READ_SCOPES, type Scope, WRITE_SCOPES } from "../../src/auth/scopes.ts";
import type { Database } from "../../src/db/client.ts";
import { API_PREFIX, type RouteDef } from "../../src/routes/route-def.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  type SeededAccount,
  sampleBody,
  sampleQuery,
  seedAccount,
  seedAdRule,
  seedRecordedCall,
} from "./harness.ts";

type App = Awaited<ReturnType<typeof createTestApp>>;

/** A scope other than `required`, so a key holding only it must get 403. */
function otherScope(required: Scope): Scope {
  const all: readonly Scope[] = [...READ_SCOPES, ...WRITE_SCOPES];
  const other = all.find((s) => s !== required);
  if (!other) throw new Error("no other scope");
  return other;
}

function assertCommonHeaders(headers: Record<string, unknown>, where: string) {
  assert.equal(headers["cache-control"], "private, no-store", `${where}: Cache-Control`);
  assert.equal(headers["x-content-type-options"], "nosniff", `${where}: X-Content-Type-Options`);
  assert.equal(headers["x-ratelimit-limit"], "600", `${where}: X-RateLimit-Limit`);
  assert.match(String(headers["x-ratelimit-remaining"]), /^\d+$/, `${where}: X-RateLimit-Remaining`);
}

/**
 * Key-authenticated routes outside the registry: any valid key passes (no scope of their own), so
 * they get every check but the wrong-scope one. A 2xx must carry what `served` looks for.
 */
export const KEYED_EXTRAS: readonly {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  served: string;
}[] = [
  { method: "GET", url: `${API_PREFIX}/tools`, served: "data" },
  {
    method: "POST",
    url: "/mcp",
    headers: { accept: "application/json, text/event-stream" },
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "security-suite", version: "1" },
      },
    },
    served: "result",
  },
];

/**
 * The shared security suite: every registered route, every method, against no key, malformed,
 * unknown, revoked and expired keys, a key without the route's scope, a `*` key, the route's own
 * scope, and the free plan. Later routes get it by being in the registry.
 */
export function securitySuite(routes: readonly RouteDef[]) {
  describe("security suite over every registered route", () => {
    let db: Database;
    let app: App;
    let account: SeededAccount;
    let freeAccount: SeededAccount;
    let star: string;
    let revoked: string;
    let expired: string;
    let freeKey: string;
    let recordedCallId = 0;

    before(async () => {
      db = await openTestDatabase();
      app = await createTestApp(db);
      account = await seedAccount(db);
      star = await account.key(["*"]);
      revoked = await account.key(["*"]);
      await account.revoke(revoked);
      // Created two years ago with a 90-day expiry: expired long since.
      expired = await account.key(["*"], {
        expires: "90d",
        createdAt: new Date(Date.now() - 730 * 86_400_000),
      });
      recordedCallId = await seedRecordedCall(db, app.files, account.accountId);
      freeAccount = await seedAccount(db);
      freeKey = await freeAccount.key(["*"]);
      await freeAccount.setPlan("free");
    });
    after(async () => {
      await app.close();
      await app.audit.close();
      await db.close();
    });

    test("the registry is not empty", () => assert.ok(routes.length > 0));

    // Each route gets its own client address so the failed-auth throttle (per IP) of one check
    // never answers for another.
    let clients = 0;
    for (const route of routes) {
      for (const method of route.methods) {
        clients += 1;
        const remoteAddress = `10.0.${Math.floor(clients / 250)}.${clients % 250}`;
        const url = API_PREFIX + route.path;
        const name = `${method} ${route.path}`;
        const newRule = () => seedAdRule(db, account.accountId);
        const send = async (headers: Record<string, string>) =>
          app.inject({
            method,
            url: method === "GET" ? url + sampleQuery(route.path, { recordedCallId }) : url,
            remoteAddress,
            headers: method === "GET" ? headers : { ...headers, "content-type": "application/json" },
            payload: method === "GET" ? undefined : JSON.stringify(await sampleBody(route.path, { newRule })),
          });

        test(`${name}: no key → 401`, async () => {
          const res = await send({});
          assert.equal(res.statusCode, 401);
          assert.deepEqual(res.json(), { error: "invalid_or_missing_api_key" });
          assertCommonHeaders(res.headers, name);
        });

        test(`${name}: malformed keys → 401`, async () => {
          for (const bad of [
            "junk",
            "svc_sk_live_short",
            `svc_sk_test_${"a".repeat(32)}`,
            `svc_sk_live_${"!".repeat(32)}`,
          ]) {
            const res = await send(bearer(bad));
            assert.equal(res.statusCode, 401, bad);
            assert.deepEqual(res.json(), { error: "invalid_or_missing_api_key" });
          }
          const basic = await send({ authorization: `Basic ${star}` });
          assert.equal(basic.statusCode, 401, "a non-Bearer scheme");
        });

        test(`${name}: unknown, revoked and expired keys → 401`, async () => {
          for (const key of [`svc_sk_live_${"A".repeat(32)}`, revoked, expired]) {
            const res = await send(bearer(key));
            assert.equal(res.statusCode, 401);
            assert.deepEqual(res.json(), { error: "invalid_or_missing_api_key" });
            assertCommonHeaders(res.headers, name);
          }
        });

        test(`${name}: a key without ${route.scope} → 403 naming it`, async () => {
          const key = await account.key([otherScope(route.scope)]);
          const res = await send(bearer(key));
          assert.equal(res.statusCode, 403);
          assert.deepEqual(res.json(), { error: "insufficient_scope", required: route.scope });
          assertCommonHeaders(res.headers, name);
        });

        test(`${name}: its own scope and * are accepted`, async () => {
          for (const key of [await account.key([route.scope]), star]) {
            const res = await send(bearer(key));
            assert.equal(res.statusCode, 200, res.body);
            assert.ok("data" in res.json(), "enveloped in data");
            assertCommonHeaders(res.headers, name);
          }
        });

        test(`${name}: free plan → 403 plan_free_no_api`, async () => {
          const res = await send(bearer(freeKey));
          assert.equal(res.statusCode, 403);
          assert.deepEqual(res.json(), { error: "plan_free_no_api" });
        });

        test(`${name}: the key in the query string is refused`, async () => {
          const res = await app.inject({ method, url: `${url}?api_key=${star}&key=${star}`, remoteAddress });
          assert.equal(res.statusCode, 401);
        });

        if (method !== "GET") {
          test(`${name}: a body nested past 32 levels → 400 naming the bound`, async () => {
            let deep: unknown = 1;
            for (let i = 0; i < 40; i += 1) deep = { a: deep };
            const body = { ...(await sampleBody(route.path, { newRule })), deep };
            const res = await app.inject({
              method,
              url,
              remoteAddress,
              headers: { ...bearer(star), "content-type": "application/json" },
              payload: JSON.stringify(body),
            });
            assert.equal(res.statusCode, 400);
            assert.deepEqual(res.json(), { error: "body nests deeper than 32 levels" });
          });
        }
      }

      test(`${route.path}: TRACE and PROPFIND → 405 naming ${route.methods.join(", ")}`, async () => {
        for (const method of ["TRACE", "PROPFIND"] as const) {
          const res = await app.inject({ method, url: API_PREFIX + route.path });
          assert.equal(res.statusCode, 405, method);
          assert.deepEqual(res.json(), { error: "method_not_allowed", allowed: [...route.methods] });
          assertCommonHeaders(res.headers, `${method} ${route.path}`);
        }
      });
    }

    for (const extra of KEYED_EXTRAS) {
      clients += 1;
      const remoteAddress = `10.1.${Math.floor(clients / 250)}.${clients % 250}`;
      const name = `${extra.method} ${extra.url}`;
      const send = (headers: Record<string, string>, url = extra.url) =>
        app.inject({
          method: extra.method,
          url,
          remoteAddress,
          headers:
            extra.body === undefined
              ? { ...extra.headers, ...headers }
              : { ...extra.headers, ...headers, "content-type": "application/json" },
          payload: extra.body === undefined ? undefined : JSON.stringify(extra.body),
        });

      test(`${name}: no key, malformed, unknown, revoked and expired keys → 401`, async () => {
        for (const headers of [
          {},
          bearer("junk"),
          { authorization: `Basic ${star}` },
          bearer(`svc_sk_live_${"A".repeat(32)}`),
          bearer(revoked),
          bearer(expired),
        ]) {
          const res = await send(headers);
          assert.equal(res.statusCode, 401, JSON.stringify(headers));
          assert.deepEqual(res.json(), { error: "invalid_or_missing_api_key" });
          assertCommonHeaders(res.headers, name);
        }
      });

      test(`${name}: any one scope and * are accepted`, async () => {
        for (const key of [await account.key(["read:capi"]), await account.key(["write:goals"]), star]) {
          const res = await send(bearer(key));
          assert.equal(res.statusCode, 200, res.body);
          assert.ok(extra.served in res.json(), `answers ${extra.served}`);
          assertCommonHeaders(res.headers, name);
        }
      });

      test(`${name}: free plan → 403 plan_free_no_api`, async () => {
        const res = await send(bearer(freeKey));
        assert.equal(res.statusCode, 403);
        assert.deepEqual(res.json(), { error: "plan_free_no_api" });
      });

      test(`${name}: the key in the query string is refused`, async () => {
        const res = await send({}, `${extra.url}?api_key=${star}&key=${star}`);
        assert.equal(res.statusCode, 401);
      });
    }
  });
}
