import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, type TestContext, test } from "node:test";
import { Redis } from "ioredis";
import pino from "pino";
import { type CounterStore, createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { connectRedisCounters, createFailoverCounterStore } from "../../src/http/redis-counters.ts";
import { bearer, createTestApp, openTestDatabase, seedAccount, type TestApp } from "../helpers/harness.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const redisUrl = process.env.REDIS_URL;

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: { level: number; msg: string; reason?: string }[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return {
    logger,
    warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg),
    reasons: () =>
      lines
        .filter((l) => l.level === 40)
        .map((l) => l.reason)
        .join(", "),
    clear: () => lines.splice(0),
    infos: () => lines.filter((l) => l.level === 30).map((l) => l.msg),
  };
}

async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** ioredis prints an unhandled connection error with console.error: none may appear. */
function watchConsole(t: TestContext) {
  const printed = t.mock.method(console, "error", () => {});
  return () => printed.mock.calls.map((call) => call.arguments.map(String).join(" "));
}

describe("counters when Redis goes away", { skip: redisUrl ? false : "REDIS_URL not set" }, () => {
  const target = new URL(redisUrl ?? "redis://127.0.0.1:6379");
  const prefix = `test:failover:${process.pid}:${randomUUID()}:`;
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let direct: Redis;

  before(async () => {
    db = await openTestDatabase();
    direct = new Redis(redisUrl ?? "");
  });
  after(async () => {
    const keys = await direct.keys(`${prefix}*`);
    if (keys.length > 0) await direct.del(...keys);
    await direct.quit();
    await db.close();
  });

  /** The per-key request count Redis holds for this test's prefix. */
  const countInRedis = async (testPrefix: string): Promise<number> => {
    const keys = await direct.keys(`${testPrefix}rate:*`);
    const values = await Promise.all(keys.map((k) => direct.get(k)));
    return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
  };

  /** With the production command timeout (100 ms); probes every 100 ms so recovery is quick to see. */
  async function setUp(proxy: TcpProxy, testPrefix: string, warm = true) {
    const log = capturedLogger();
    const counters = await connectRedisCounters(`redis://${target.hostname}:${proxy.port}`, {
      logger: log.logger,
      prefix: testPrefix,
      probeIntervalMs: 100,
    });
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const app = await createTestApp(db, { counters });
    const get = async () => {
      const started = performance.now();
      const res = await app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      return {
        status: res.statusCode,
        remaining: Number(res.headers["x-ratelimit-remaining"]),
        ms: performance.now() - started,
      };
    };
    // The first requests compile routes and warm the database, which can hold the event loop past the
    // command timeout on a busy machine: served alike, but possibly counted in process. The test's
    // own steps start once a request has gone to Redis and it is still the backend.
    for (let tries = 0; warm && tries < 20; tries++) {
      await get();
      if (!counters.status().degraded && (await countInRedis(testPrefix)) > 0) break;
      await waitFor(() => !counters.status().degraded, 5000, "warmed up on Redis");
    }
    if (warm) log.clear();
    return { log, counters, app, get };
  }

  async function tearDown(app: TestApp, counters: CounterStore, proxy: TcpProxy) {
    await app.close();
    await app.audit.close();
    await counters.close();
    await proxy.close();
  }

  test("cut: requests keep answering 200 at once, counted in process; restored: counted in Redis again", async (t) => {
    const printed = watchConsole(t);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const testPrefix = `${prefix}cut:`;
    const { log, counters, app, get } = await setUp(proxy, testPrefix);
    try {
      assert.deepEqual(counters.status(), { backend: "redis", degraded: false }, log.reasons());
      const before = await countInRedis(testPrefix);
      assert.ok(before > 0);

      await proxy.cut();
      const during = [];
      for (let i = 0; i < 10; i++) during.push(await get());
      assert.deepEqual(
        during.map((r) => r.status),
        Array(10).fill(200),
      );
      const slowest = Math.max(...during.map((r) => r.ms));
      assert.ok(slowest < 1000, `slowest request while Redis is cut: ${slowest} ms`);
      // Counted by this process: one less left after each request.
      const first = during[0]?.remaining ?? 0;
      assert.deepEqual(
        during.map((r) => r.remaining),
        during.map((_, i) => first - i),
      );
      assert.deepEqual(counters.status(), { backend: "memory", degraded: true });
      assert.equal(log.warnings().length, 1, log.warnings().join(" | "));
      assert.match(log.warnings()[0] ?? "", /Redis is unreachable: counting in this process/);

      await proxy.restore();
      await waitFor(() => !counters.status().degraded, 5000, "back on Redis");
      assert.deepEqual(counters.status(), { backend: "redis", degraded: false });
      assert.deepEqual(log.infos(), ["Redis is reachable again: counters are shared through it again"]);
      const back = await get();
      assert.equal(back.status, 200);
      assert.equal(back.remaining, 600 - (before + 1), "Redis's own count goes on from where it was");
      assert.equal(await countInRedis(testPrefix), before + 1);
      assert.equal(log.warnings().length, 1, "one warn for the whole outage");
      assert.deepEqual(
        printed().filter((line) => line.includes("Unhandled error event")),
        [],
      );
    } finally {
      await tearDown(app, counters, proxy);
    }
  });

  test("frozen (connection open, nothing answered): the command timeout fails over, a PING brings it back", async () => {
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const testPrefix = `${prefix}frozen:`;
    const { log, counters, app, get } = await setUp(proxy, testPrefix);
    try {
      const before = await countInRedis(testPrefix);
      proxy.freeze();
      const first = await get();
      assert.equal(first.status, 200);
      assert.ok(first.ms < 1000, `first request on a frozen Redis: ${first.ms} ms`);
      assert.deepEqual(counters.status(), { backend: "memory", degraded: true });
      const next = await get();
      assert.equal(next.status, 200);
      assert.equal(log.warnings().length, 1);
      proxy.restore();
      await waitFor(() => !counters.status().degraded, 5000, "back on Redis after the freeze");
      assert.equal((await get()).status, 200);
      // Only the request after: the one that met the freeze timed out on its first command (the
      // failed-auth gate's read), so its count went to the process.
      assert.equal(await countInRedis(testPrefix), before + 1);
    } finally {
      await tearDown(app, counters, proxy);
    }
  });

  test("Redis down at start: the service starts degraded within the connect timeout and serves", async () => {
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    await proxy.cut();
    const started = performance.now();
    const { log, counters, app, get } = await setUp(proxy, `${prefix}start:`, false);
    try {
      assert.ok(performance.now() - started < 3000);
      assert.deepEqual(counters.status(), { backend: "memory", degraded: true });
      assert.equal((await get()).status, 200);
      assert.equal(log.warnings().length, 1);
      await proxy.restore();
      await waitFor(() => !counters.status().degraded, 5000, "connected once Redis is up");
    } finally {
      await tearDown(app, counters, proxy);
    }
  });

  test("a reply error (Redis answered, refusing the command) is not hidden by the fallback", async () => {
    const redis = new Redis(redisUrl ?? "");
    await new Promise((resolve) => redis.once("ready", resolve));
    const refused = Object.assign(new Error("ERR syntax error"), { name: "ReplyError" });
    const primary: CounterStore = {
      hit: async () => Promise.reject(refused),
      peek: async () => Promise.reject(refused),
      release: async () => Promise.reject(refused),
      status: () => ({ backend: "redis", degraded: false }),
      close: async () => {},
    };
    const log = capturedLogger();
    const store = createFailoverCounterStore({
      redis,
      primary,
      fallback: createMemoryCounterStore(),
      logger: log.logger,
    });
    await assert.rejects(store.hit("k", 60_000), /ERR syntax error/);
    assert.deepEqual(store.status(), { backend: "redis", degraded: false });
    assert.deepEqual(log.warnings(), []);
    await store.close();
    await redis.quit();
  });
});
