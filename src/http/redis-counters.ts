import { Redis } from "ioredis";
import type { Logger } from "pino";
import { type CounterStore, createMemoryCounterStore, createRedisCounterStore } from "./rate-limiter.ts";

/**
 * Redis-backed counters that keep answering while Redis is away: counts go to an in-process store
 * until Redis is reachable again (each instance then counts alone: the documented trade-off), so a
 * Redis outage costs exactness for a while, never the requests themselves.
 */

export interface FailoverOptions {
  /** The connection `primary` uses: its status says, without a round trip, whether it can answer. */
  redis: Redis;
  primary: CounterStore;
  fallback: CounterStore;
  logger: Pick<Logger, "warn" | "info" | "debug">;
  /** While degraded on a connection that still looks up (a frozen server), how often to PING it. */
  probeIntervalMs?: number;
  /**
   * How long a command may take before Redis counts as away; it bounds what a frozen Redis adds to
   * one request (a refused or closed connection fails over at once).
   */
  commandTimeoutMs?: number;
}

/**
 * `work`, or a rejection once `ms` have passed without its answer. The expiry waits one more turn of
 * the event loop (setImmediate runs after the I/O poll): when this process itself was stalled (a
 * long synchronous query on the embedded database), an answer Redis already sent is read first
 * rather than being mistaken for a silent Redis, as ioredis's own commandTimeout would.
 */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (!settled) reject(new Error(`Redis did not answer within ${ms} ms`));
      });
    }, ms);
    const settle = () => {
      settled = true;
      clearTimeout(timer);
    };
    work.then(
      (value) => {
        settle();
        resolve(value);
      },
      (err: unknown) => {
        settle();
        reject(err);
      },
    );
  });
}

/**
 * An error that says Redis did not answer (timeout, closed or unwritable connection). A reply error
 * means Redis answered and refused the command: that is a bug or an unsupported server, and falling
 * back would hide it.
 */
function isUnreachable(err: unknown): boolean {
  return err instanceof Error && err.name !== "ReplyError" && !(err instanceof RangeError);
}

export function createFailoverCounterStore(options: FailoverOptions): CounterStore {
  const { redis, primary, fallback, logger } = options;
  const probeIntervalMs = options.probeIntervalMs ?? 1000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 100;
  let degraded = false;
  let closing = false;
  let probe: NodeJS.Timeout | null = null;

  const recover = () => {
    if (!degraded || closing) return;
    degraded = false;
    if (probe) clearInterval(probe);
    probe = null;
    logger.info("Redis is reachable again: counters are shared through it again");
  };

  const degrade = (reason: string) => {
    if (degraded || closing) return;
    degraded = true;
    logger.warn({ reason }, "Redis is unreachable: counting in this process until it returns");
    // A reconnection announces itself ("ready"); a connection that stayed open but stopped answering
    // does not, so it is asked now and then.
    probe = setInterval(() => {
      if (redis.status !== "ready") return;
      within(redis.ping(), commandTimeoutMs).then(recover, () => {});
    }, probeIntervalMs);
    probe.unref();
  };

  // Without a listener ioredis prints every failed reconnection as "Unhandled error event".
  redis.on("error", (err: Error) => {
    logger.debug({ err: err.message }, "Redis connection error");
    degrade(err.message);
  });
  redis.on("close", () => degrade("connection closed"));
  redis.on("ready", recover);

  const run = async <T>(op: (store: CounterStore) => Promise<T>): Promise<T> => {
    if (degraded) return op(fallback);
    if (redis.status !== "ready") {
      degrade(`connection ${redis.status}`);
      return op(fallback);
    }
    try {
      return await within(op(primary), commandTimeoutMs);
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      degrade(err instanceof Error ? err.message : String(err));
      return op(fallback);
    }
  };

  return {
    hit: (key, windowMs) => run((store) => store.hit(key, windowMs)),
    peek: (key, windowMs) => run((store) => store.peek(key, windowMs)),
    release: (key, windowMs) => run((store) => store.release(key, windowMs)),
    status: () => ({ backend: degraded ? "memory" : "redis", degraded }),
    async close() {
      closing = true;
      if (probe) clearInterval(probe);
      await primary.close();
      await fallback.close();
    },
  };
}

export interface RedisCountersOptions {
  logger: Pick<Logger, "warn" | "info" | "debug">;
  /** Key prefix shared by every instance counting together. */
  prefix?: string;
  commandTimeoutMs?: number;
  probeIntervalMs?: number;
  /** How long start-up waits for the first connection before serving degraded. */
  connectTimeoutMs?: number;
  clock?: () => number;
}

/**
 * REDIS_URL's counters: connects (up to connectTimeoutMs, then starts degraded and keeps retrying),
 * and owns the connection, closed with the store.
 */
export async function connectRedisCounters(
  url: string,
  options: RedisCountersOptions,
): Promise<CounterStore> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  const redis = new Redis(url, {
    lazyConnect: true,
    // Fail fast instead of queueing: a command while disconnected is rejected at once and counted
    // in process; one given up on is not sent again after a reconnection (it would count twice).
    // Slow answers are bounded by the store's own deadline (`within`), not ioredis's commandTimeout.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: connectTimeoutMs,
  });
  const store = createFailoverCounterStore({
    redis,
    primary: createRedisCounterStore(redis, options.prefix ?? "ascribe:", options.clock),
    fallback: createMemoryCounterStore(options.clock),
    logger: options.logger,
    probeIntervalMs: options.probeIntervalMs,
    commandTimeoutMs: options.commandTimeoutMs,
  });
  // A refused first connection is already logged (degraded); ioredis keeps retrying by itself.
  await redis.connect().catch(() => {});
  return {
    ...store,
    async close() {
      await store.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
