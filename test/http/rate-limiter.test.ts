import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import {
  type CounterStore,
  createMemoryCounterStore,
  createRedisCounterStore,
} from "../../src/http/rate-limiter.ts";

const WINDOW_MS = 60_000;
// floor(1_700_000_030_000 / 60_000) = 28_333_333, so this window is
// [1_699_999_980_000, 1_700_000_040_000) and the next one ends at 1_700_000_100_000.
const T0 = 1_700_000_030_000;
const WINDOW_END = 1_700_000_040_000;
const NEXT_WINDOW_END = 1_700_000_100_000;

/** A clock the test moves by hand; each test gets its own so tests cannot disturb each other's time. */
function manualClock(start: number): { now: () => number; set: (t: number) => void } {
  let t = start;
  return {
    now: () => t,
    set: (next) => {
      t = next;
    },
  };
}

function suite(
  name: string,
  makeStore: (clock: () => number) => CounterStore,
  options: { skip?: string } = {},
): void {
  describe(name, options, () => {
    test("650 concurrent hits on one key get exactly the counts 1..650, each once", async () => {
      const clock = manualClock(T0);
      const store = makeStore(clock.now);
      const results = await Promise.all(Array.from({ length: 650 }, () => store.hit("burst", WINDOW_MS)));

      const counts = results.map((r) => r.count).sort((a, b) => a - b);
      assert.equal(counts.length, 650);
      assert.equal(new Set(counts).size, 650);
      assert.equal(counts[0], 1);
      assert.equal(counts[649], 650);
      for (const [i, c] of counts.entries()) assert.equal(c, i + 1);
      for (const r of results) assert.equal(r.resetAt, WINDOW_END);

      assert.deepEqual(await store.peek("burst", WINDOW_MS), { count: 650, resetAt: WINDOW_END });
      assert.deepEqual(await store.hit("burst-other", WINDOW_MS), { count: 1, resetAt: WINDOW_END });
      assert.deepEqual(await store.peek("burst", WINDOW_MS), { count: 650, resetAt: WINDOW_END });
      await store.close();
    });

    test("keys are independent", async () => {
      const store = makeStore(manualClock(T0).now);
      assert.equal((await store.hit("a", WINDOW_MS)).count, 1);
      assert.equal((await store.hit("a", WINDOW_MS)).count, 2);
      assert.equal((await store.hit("b", WINDOW_MS)).count, 1);
      assert.equal((await store.hit("a", WINDOW_MS)).count, 3);
      assert.equal((await store.hit("b", WINDOW_MS)).count, 2);
      await store.close();
    });

    test("peek does not add", async () => {
      const store = makeStore(manualClock(T0).now);
      assert.deepEqual(await store.peek("p", WINDOW_MS), { count: 0, resetAt: WINDOW_END });
      assert.deepEqual(await store.peek("p", WINDOW_MS), { count: 0, resetAt: WINDOW_END });
      await store.hit("p", WINDOW_MS);
      await store.hit("p", WINDOW_MS);
      assert.deepEqual(await store.peek("p", WINDOW_MS), { count: 2, resetAt: WINDOW_END });
      assert.deepEqual(await store.peek("p", WINDOW_MS), { count: 2, resetAt: WINDOW_END });
      assert.equal((await store.hit("p", WINDOW_MS)).count, 3);
      await store.close();
    });

    test("release takes back one hit of the current window, never below zero nor into another window", async () => {
      const clock = manualClock(T0);
      const store = makeStore(clock.now);
      await store.release("u", WINDOW_MS);
      assert.deepEqual(await store.peek("u", WINDOW_MS), { count: 0, resetAt: WINDOW_END });
      await store.hit("u", WINDOW_MS);
      await store.hit("u", WINDOW_MS);
      await store.hit("u", WINDOW_MS);
      await store.release("u", WINDOW_MS);
      assert.deepEqual(await store.peek("u", WINDOW_MS), { count: 2, resetAt: WINDOW_END });
      assert.equal((await store.hit("u", WINDOW_MS)).count, 3);
      await Promise.all([1, 2, 3, 4].map(() => store.release("u", WINDOW_MS)));
      assert.deepEqual(await store.peek("u", WINDOW_MS), { count: 0, resetAt: WINDOW_END });
      await store.hit("u", WINDOW_MS);
      clock.set(WINDOW_END);
      await store.release("u", WINDOW_MS);
      assert.deepEqual(await store.peek("u", WINDOW_MS), { count: 0, resetAt: NEXT_WINDOW_END });
      assert.equal((await store.hit("u", WINDOW_MS)).count, 1);
      await store.close();
    });

    test("resetAt is the end of the epoch-aligned window", async () => {
      const clock = manualClock(T0);
      const store = makeStore(clock.now);
      assert.equal((await store.hit("r", WINDOW_MS)).resetAt, 1_700_000_040_000);
      // First and last millisecond of the same window.
      clock.set(1_699_999_980_000);
      assert.deepEqual(await store.hit("r", WINDOW_MS), { count: 2, resetAt: 1_700_000_040_000 });
      clock.set(1_700_000_039_999);
      assert.deepEqual(await store.hit("r", WINDOW_MS), { count: 3, resetAt: 1_700_000_040_000 });
      // 1_700_000_030_000 is itself a 1-s boundary, so its 1-s window ends 1_000 ms later.
      clock.set(T0);
      assert.equal((await store.hit("r-1s", 1_000)).resetAt, 1_700_000_031_000);
      await store.close();
    });

    test("a new window restarts at 1", async () => {
      const clock = manualClock(T0);
      const store = makeStore(clock.now);
      for (let i = 1; i <= 5; i++) assert.equal((await store.hit("w", WINDOW_MS)).count, i);

      clock.set(WINDOW_END - 1);
      assert.deepEqual(await store.peek("w", WINDOW_MS), { count: 5, resetAt: WINDOW_END });

      clock.set(WINDOW_END);
      assert.deepEqual(await store.peek("w", WINDOW_MS), { count: 0, resetAt: NEXT_WINDOW_END });
      assert.deepEqual(await store.hit("w", WINDOW_MS), { count: 1, resetAt: NEXT_WINDOW_END });
      assert.deepEqual(await store.hit("w", WINDOW_MS), { count: 2, resetAt: NEXT_WINDOW_END });
      await store.close();
    });

    test("many keys over many windows keep counting exactly", async () => {
      // Fresh keys in every window push the memory store past its sweep threshold (1024 entries), so
      // past-window entries get swept while current-window ones must keep their counts.
      const clock = manualClock(T0);
      const store = makeStore(clock.now);
      for (let w = 0; w < 3; w++) {
        clock.set(T0 + w * WINDOW_MS);
        const end = WINDOW_END + w * WINDOW_MS;
        for (let k = 0; k < 1500; k++) {
          assert.deepEqual(await store.hit(`many-${w}-${k}`, WINDOW_MS), { count: 1, resetAt: end });
        }
        for (let k = 0; k < 1500; k += 7) {
          assert.deepEqual(await store.hit(`many-${w}-${k}`, WINDOW_MS), { count: 2, resetAt: end });
        }
        assert.deepEqual(await store.peek(`many-${w}-7`, WINDOW_MS), { count: 2, resetAt: end });
        assert.deepEqual(await store.peek(`many-${w}-8`, WINDOW_MS), { count: 1, resetAt: end });
        if (w > 0) {
          assert.deepEqual(await store.peek(`many-${w - 1}-7`, WINDOW_MS), { count: 0, resetAt: end });
        }
      }
      await store.close();
    });

    test("a windowMs that is not a positive integer is rejected", async () => {
      const store = makeStore(manualClock(T0).now);
      await assert.rejects(store.hit("bad", 0), RangeError);
      await assert.rejects(store.peek("bad", -1), RangeError);
      await assert.rejects(store.hit("bad", 1.5), RangeError);
      await store.close();
    });
  });
}

suite("memory counter store", (clock) => createMemoryCounterStore(clock));

test("memory counter store: keys of past windows are let go", async () => {
  let now = 1_700_000_030_000;
  const store = createMemoryCounterStore(() => now);
  for (let window = 0; window < 5; window++) {
    for (let k = 0; k < 5000; k++) await store.hit(`w${window}:k${k}`, 60_000);
    now += 60_000;
  }
  // 25,000 keys were hit; without sweeping all would still be held. Sweeps run once the map has
  // doubled, so at most the last two windows' keys remain.
  assert.ok(store.size() <= 10_000, `size ${store.size()}`);
  assert.deepEqual(await store.peek("w4:k1", 60_000), { count: 0, resetAt: 1_700_000_340_000 });
});

const redisUrl = process.env.REDIS_URL;
// Unique per run: the Redis server is shared with other runs.
const prefix = `test:rate-limiter:${process.pid}:${randomUUID()}:`;

if (!redisUrl && process.env.CI === "true") {
  // In CI a missing REDIS_URL would otherwise turn the Redis suite into a silent skip.
  test("REDIS_URL is set in CI", () => {
    assert.ok(redisUrl, "REDIS_URL must be set in CI so the Redis counter store is tested");
  });
}

describe("redis counter store", { skip: redisUrl ? false : "REDIS_URL not set" }, () => {
  let redis: Redis | undefined;

  const connection = (): Redis => {
    assert.ok(redis, "before() connects to Redis");
    return redis;
  };

  before(async () => {
    redis = new Redis(redisUrl ?? "", { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });

  after(async () => {
    if (!redis) return;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    await redis.quit();
  });

  suite("shared suite", (clock) => createRedisCounterStore(connection(), prefix, clock));

  test("the key is prefix + key + window index and gets a TTL set only on the first hit", async () => {
    const redis = connection();
    const store = createRedisCounterStore(redis, prefix, () => T0);
    await store.hit("ttl", WINDOW_MS);

    const key = `${prefix}ttl:28333333`;
    assert.equal(await redis.get(key), "1");
    const first = await redis.pttl(key);
    assert.ok(first > 0 && first <= 60_000, `pttl ${first}`);

    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.hit("ttl", WINDOW_MS);
    const second = await redis.pttl(key);
    assert.ok(
      second > 0 && second < first,
      `pttl ${second} after ${first}: the second hit must not extend it`,
    );
    assert.equal(await redis.get(key), "2");
    await store.close();
  });

  test("close() leaves the borrowed connection open", async () => {
    const redis = connection();
    const store = createRedisCounterStore(redis, prefix, () => T0);
    await store.close();
    assert.equal(await redis.ping(), "PONG");
  });
});
