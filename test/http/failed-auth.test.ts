import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import {
  type CounterStore,
  createMemoryCounterStore,
  createRedisCounterStore,
} from "../../src/http/rate-limiter.ts";
import { bearer, createTestApp, openTestDatabase, seedAccount, type TestApp } from "../helpers/harness.ts";

// SPEC Limits: "more than 20 responses 401 within one minute from an IP address: 429 for the rest of
// that minute" — the 21st 401 is the one that makes it "more than 20", so 21 answer 401.
const EXPECTED_401 = 21;

/** Counters frozen mid-window, so a slow run cannot straddle a window boundary. */
const frozenAt = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
const BAD_KEY = `svc_sk_live_${"x".repeat(32)}`;

let db: Awaited<ReturnType<typeof openTestDatabase>>;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

async function withApps<T>(stores: CounterStore[], fn: (apps: TestApp[]) => Promise<T>): Promise<T> {
  const apps = await Promise.all(stores.map((counters) => createTestApp(db, { counters })));
  try {
    return await fn(apps);
  } finally {
    for (const app of apps) {
      await app.close();
      await app.audit.close();
    }
  }
}

/** 50 bad-key requests from one address, all in flight at once, spread round-robin over the apps. */
async function burst(apps: TestApp[], ip: string): Promise<number[]> {
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      apps[i % apps.length]?.inject({
        url: "/api/v1/icp/criteria",
        remoteAddress: ip,
        headers: bearer(BAD_KEY),
      }),
    ),
  );
  return responses.map((r) => r?.statusCode ?? 0);
}

function tally(statuses: number[]): { 401: number; 429: number } {
  return {
    401: statuses.filter((s) => s === 401).length,
    429: statuses.filter((s) => s === 429).length,
  };
}

describe("failed-auth throttle under concurrency (memory store)", () => {
  test("50 concurrent bad keys from one IP → exactly 21 × 401 and 29 × 429", async () => {
    await withApps([createMemoryCounterStore(() => frozenAt)], async (apps) => {
      assert.deepEqual(tally(await burst(apps, "10.50.0.1")), { 401: EXPECTED_401, 429: 50 - EXPECTED_401 });
    });
  });

  test("the address stays refused afterwards, even with a valid key; another address is not", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await withApps([createMemoryCounterStore(() => frozenAt)], async ([app]) => {
      assert.ok(app);
      await burst([app], "10.50.0.2");
      const blocked = await app.inject({
        url: "/api/v1/icp/criteria",
        remoteAddress: "10.50.0.2",
        headers: bearer(key),
      });
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.headers["retry-after"], "60");
      const other = await app.inject({
        url: "/api/v1/icp/criteria",
        remoteAddress: "10.50.0.3",
        headers: bearer(key),
      });
      assert.equal(other.statusCode, 200);
    });
  });

  test("the webhook's bad signatures share the count and the same exact cut-off", async () => {
    await withApps([createMemoryCounterStore(() => frozenAt)], async ([app]) => {
      assert.ok(app);
      const responses = await Promise.all(
        Array.from({ length: 50 }, () =>
          app.inject({
            method: "POST",
            url: "/api/webhook/events?client_key=ck_AAAAAAAAAAAAAAAA",
            remoteAddress: "10.50.0.4",
            headers: { "content-type": "application/json" },
            payload: "{}",
          }),
        ),
      );
      const statuses = responses.map((r) => r.statusCode);
      assert.deepEqual(tally(statuses), { 401: EXPECTED_401, 429: 50 - EXPECTED_401 });
      const refused = responses.find((r) => r.statusCode === 429);
      assert.equal(refused?.headers["retry-after"], "60");
    });
  });

  test("connector hooks: unknown connector ids share the count and the same exact cut-off", async () => {
    await withApps([createMemoryCounterStore(() => frozenAt)], async ([app]) => {
      assert.ok(app);
      const responses = await Promise.all(
        // Every vendor's hook counts against the same address.
        Array.from({ length: 50 }, (_, i) =>
          app.inject({
            method: "POST",
            url: `/api/hooks/${["stripe", "calendly", "calcom"][i % 3]}/00000000-0000-4000-8000-000000000000`,
            remoteAddress: "10.50.0.5",
            headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
            payload: "{}",
          }),
        ),
      );
      // A 404 for an id no connector has, counted like a bad credential: ids are not probed faster.
      const count = (status: number) => responses.filter((r) => r.statusCode === status).length;
      assert.deepEqual([count(404), count(429)], [EXPECTED_401, 50 - EXPECTED_401]);
    });
  });
});

const redisUrl = process.env.REDIS_URL;

describe("failed-auth throttle under concurrency (Redis store)", {
  skip: redisUrl ? false : "REDIS_URL not set",
}, () => {
  const connections: Redis[] = [];
  const prefix = `test:failed-auth:${process.pid}:${randomUUID()}:`;

  /** A store on its own connection, as a separate instance of the service would have. */
  const instanceStore = (): CounterStore => {
    const redis = new Redis(redisUrl ?? "");
    connections.push(redis);
    return createRedisCounterStore(redis, prefix, () => frozenAt);
  };

  after(async () => {
    const [first] = connections;
    if (first) {
      const keys = await first.keys(`${prefix}*`);
      if (keys.length > 0) await first.del(...keys);
    }
    for (const redis of connections) await redis.quit();
  });

  test("one instance: 50 concurrent bad keys → exactly 21 × 401 and 29 × 429", async () => {
    await withApps([instanceStore()], async (apps) => {
      assert.deepEqual(tally(await burst(apps, "10.51.0.1")), { 401: EXPECTED_401, 429: 50 - EXPECTED_401 });
    });
  });

  test("two instances sharing Redis: the same 21 × 401 in all", async () => {
    await withApps([instanceStore(), instanceStore()], async (apps) => {
      assert.deepEqual(tally(await burst(apps, "10.51.0.2")), { 401: EXPECTED_401, 429: 50 - EXPECTED_401 });
    });
  });
});
