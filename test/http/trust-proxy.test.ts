import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import type { TrustProxy } from "../../src/http/trust-proxy.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  type SeededAccount,
  seedAccount,
  type TestApp,
} from "../helpers/harness.ts";

const BAD_KEY = `svc_sk_live_${"x".repeat(32)}`;
/** Where Caddy connects from when it runs on the same host. */
const PROXY = "127.0.0.1";
const CLIENT_A = "203.0.113.7";
const CLIENT_B = "203.0.113.8";

describe("TRUST_PROXY in the configuration", () => {
  const trustOf = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;

  test("unset (or empty) trusts nobody", () => {
    assert.equal(loadConfig({}).trustProxy, null);
    assert.equal(loadConfig({ TRUST_PROXY: "" }).trustProxy, null);
    assert.equal(trustOf("0"), null);
  });

  test("a hop count, or a list of addresses, CIDR ranges and proxy-addr's named ranges", () => {
    assert.equal(trustOf("1"), 1);
    assert.equal(trustOf(" 2 "), 2);
    assert.deepEqual(trustOf("127.0.0.1, 10.0.0.0/8,::1/128 ,fd00::/8,loopback"), [
      "127.0.0.1",
      "10.0.0.0/8",
      "::1/128",
      "fd00::/8",
      "loopback",
    ]);
  });

  test("anything else is refused at start-up with one line naming the variable and the bad entry", () => {
    const cases: [string, string][] = [
      ["yes", '"yes"'],
      ["true", '"true"'],
      ["10.0.0.0/33", '"10.0.0.0/33"'],
      ["::1/129", '"::1/129"'],
      ["10.0.0.0/8/1", '"10.0.0.0/8/1"'],
      ["127.0.0.1,", '""'],
      ["-1", '"-1"'],
      ["1,2", '"1"'],
      ["101", '"101"'],
    ];
    for (const [value, named] of cases) {
      assert.throws(
        () => trustOf(value),
        (err: Error) => {
          assert.match(
            err.message,
            /^invalid environment: TRUST_PROXY: must be a hop count \(0-100\) or a comma-separated list of IP addresses or CIDR ranges; /,
          );
          assert.ok(err.message.includes(`${named} is neither`), `${value}: ${err.message}`);
          assert.ok(!err.message.includes("\n"), "one line");
          return true;
        },
      );
    }
  });
});

let db: Awaited<ReturnType<typeof openTestDatabase>>;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

/**
 * The counters' clock stands mid-minute: their windows are epoch-aligned, and a test that fills one
 * (21 failed keys, 600 beacons) then expects a 429 failed when a minute ended in between.
 */
const frozenAt = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;

async function withApp(trustProxy: TrustProxy, fn: (app: TestApp) => Promise<void>): Promise<void> {
  const app = await createTestApp(db, { trustProxy, counters: createMemoryCounterStore(() => frozenAt) });
  try {
    await fn(app);
  } finally {
    await app.close();
    await app.audit.close();
  }
}

/** A request as the proxy sends it: from the proxy's socket, the client named in X-Forwarded-For. */
function viaProxy(app: TestApp, forwardedFor: string, init: { url: string; key?: string; body?: string }) {
  return app.inject({
    method: init.body === undefined ? "GET" : "POST",
    url: init.url,
    remoteAddress: PROXY,
    headers: {
      "x-forwarded-for": forwardedFor,
      ...(init.key === undefined ? {} : bearer(init.key)),
      ...(init.body === undefined ? {} : { "content-type": "text/plain" }),
    },
    payload: init.body,
  });
}

async function auditIps(account: SeededAccount): Promise<string[]> {
  const found = await db.admin(account.accountId, (tx) =>
    rows<{ ip: string }>(
      tx,
      sql`select ip from audit_log where account_id = ${account.accountId} order by id`,
    ),
  );
  return found.map((row) => row.ip);
}

/**
 * The same scenario for each way of naming the proxy. `forwardedA` is what reaches the service for
 * client A (with whatever A forged in front of it); the client must come out as CLIENT_A.
 */
function behindProxy(name: string, trustProxy: TrustProxy, forwardedA: string, forwardedB: string) {
  describe(`behind a proxy, TRUST_PROXY=${name}`, () => {
    test("one client's 21 bad keys lock out that client only, not another behind the same proxy", async () => {
      const account = await seedAccount(db);
      const key = await account.key(["read:icp"]);
      await withApp(trustProxy, async (app) => {
        for (let i = 1; i <= 21; i++) {
          const res = await viaProxy(app, forwardedA, { url: "/api/v1/icp/criteria", key: BAD_KEY });
          assert.equal(res.statusCode, 401, `attempt ${i}`);
        }
        const blocked = await viaProxy(app, forwardedA, { url: "/api/v1/icp/criteria", key });
        assert.equal(blocked.statusCode, 429);
        const other = await viaProxy(app, forwardedB, { url: "/api/v1/icp/criteria", key });
        assert.equal(other.statusCode, 200);
      });
      assert.deepEqual(await auditIps(account), [CLIENT_B], "the audit row holds the forwarded client");
    });

    test("collect's per-IP bucket (600 a minute) is per forwarded client", async () => {
      await withApp(trustProxy, async (app) => {
        // An unreadable beacon is counted before it is read: 600 of them fill A's bucket.
        for (let i = 0; i < 600; i++) {
          const res = await viaProxy(app, forwardedA, { url: "/api/collect", body: "{}" });
          assert.equal(res.statusCode, 400, `beacon ${i}`);
        }
        const full = await viaProxy(app, forwardedA, { url: "/api/collect", body: "{}" });
        assert.equal(full.statusCode, 429);
        const other = await viaProxy(app, forwardedB, { url: "/api/collect", body: "{}" });
        assert.equal(other.statusCode, 400, "B has a bucket of its own");
      });
    });

    test("the application's sign-in throttle counts the forwarded client", async () => {
      const counters = createMemoryCounterStore(() => frozenAt);
      const app = await createTestApp(db, { trustProxy, counters });
      try {
        const page = await app.inject({ url: "/sign-in" });
        const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
        const formCookie = /ascribe_form=([^;]*)/.exec(String(page.headers["set-cookie"]))?.[1] ?? "";
        const res = await app.inject({
          method: "POST",
          url: "/sign-in",
          remoteAddress: PROXY,
          headers: {
            "x-forwarded-for": forwardedA,
            cookie: `ascribe_form=${formCookie}`,
            "content-type": "application/x-www-form-urlencoded",
          },
          payload: new URLSearchParams({
            _csrf: csrf,
            email: "nobody@example.com",
            password: "wrong",
          }).toString(),
        });
        assert.equal(res.statusCode, 401);
        assert.equal((await counters.peek(`signin-ip:${CLIENT_A}`, 15 * 60_000)).count, 1);
        assert.equal((await counters.peek(`signin-ip:${PROXY}`, 15 * 60_000)).count, 0);
      } finally {
        await app.close();
        await app.audit.close();
      }
    });
  });
}

// Caddy appends the address it saw to whatever the client sent: A's forged entry comes first.
behindProxy("1", 1, `198.51.100.99, ${CLIENT_A}`, CLIENT_B);
// Two trusted hops named by range (a load balancer in 10/8 in front of the local proxy): the first
// address from the right that is not a trusted proxy is the client.
behindProxy(
  "127.0.0.1/32,10.0.0.0/8",
  ["127.0.0.1/32", "10.0.0.0/8"],
  `198.51.100.99, ${CLIENT_A}, 10.1.2.3`,
  `${CLIENT_B}, 10.1.2.4`,
);

describe("without TRUST_PROXY", () => {
  test("a forged X-Forwarded-For changes nothing: the throttle, the audit and collect use the socket's peer", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApp(null, async (app) => {
      for (let i = 1; i <= 21; i++) {
        const res = await viaProxy(app, `203.0.113.${100 + i}`, {
          url: "/api/v1/icp/criteria",
          key: BAD_KEY,
        });
        assert.equal(res.statusCode, 401, `attempt ${i}`);
      }
      const blocked = await viaProxy(app, CLIENT_B, { url: "/api/v1/icp/criteria", key });
      assert.equal(blocked.statusCode, 429, "every forged address is the same client");
      const direct = await app.inject({
        url: "/api/v1/icp/criteria",
        remoteAddress: "192.0.2.1",
        headers: bearer(key),
      });
      assert.equal(direct.statusCode, 200);
      for (let i = 0; i < 600; i++) {
        await viaProxy(app, `203.0.113.${i % 200}`, { url: "/api/collect", body: "{}" });
      }
      const full = await viaProxy(app, CLIENT_B, { url: "/api/collect", body: "{}" });
      assert.equal(full.statusCode, 429);
    });
    assert.deepEqual(await auditIps(account), ["192.0.2.1"]);
  });
});
