import type { Redis } from "ioredis";

/**
 * Fixed-window counters: the per-API-key request limit and the per-IP count of failed authentications.
 * Windows are aligned to the epoch (index = floor(now / windowMs)) so every process, and Redis, agrees on
 * where a window starts without sharing any state beyond the counter itself.
 */

export interface WindowCount {
  count: number;
  /** Epoch ms when the window ends. */
  resetAt: number;
}

/** Where counts are kept right now, for /readyz and the log. */
export interface CounterBackend {
  backend: "memory" | "redis";
  /** True while Redis is configured but unreachable and counts are kept in this process instead. */
  degraded: boolean;
}

export interface CounterStore {
  /** Adds one to `key` in the current fixed window of `windowMs` and returns the new count. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The count of `key` in the current window, without adding. */
  peek(key: string, windowMs: number): Promise<WindowCount>;
  /**
   * Takes back one `hit` of the current window (never below zero, never into another window): an
   * attempt counted up front, so that concurrent attempts cannot all pass a check, and that turned
   * out not to be one that counts (a sign-in that succeeded).
   */
  release(key: string, windowMs: number): Promise<void>;
  /** Which backend answers now. */
  status(): CounterBackend;
  close(): Promise<void>;
}

function windowIndex(now: number, windowMs: number): number {
  // A zero, negative or fractional window would give Infinity/NaN indexes or windows that drift off the
  // epoch grid, and the limiter would then silently never reset.
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`);
  }
  return Math.floor(now / windowMs);
}

/** Below this many entries a sweep is not worth its O(n) walk. */
const MIN_SWEEP_SIZE = 1024;

interface MemoryEntry {
  resetAt: number;
  count: number;
}

/**
 * Single-process store. Everything inside `hit` is synchronous, so concurrent callers cannot interleave
 * between the read and the write and the count stays exact.
 */
export function createMemoryCounterStore(
  clock: () => number = Date.now,
): CounterStore & { /** Keys held (tests check old windows are let go). */ size(): number } {
  const entries = new Map<string, MemoryEntry>();
  // Sweeping only once the map has doubled since the last sweep makes each sweep pay for itself with the
  // inserts that preceded it (amortized O(1) per hit), and needs no timer to clear at shutdown.
  let sweepAt = MIN_SWEEP_SIZE;

  const sweep = (now: number): void => {
    for (const [key, entry] of entries) {
      if (entry.resetAt <= now) entries.delete(key);
    }
    sweepAt = Math.max(MIN_SWEEP_SIZE, entries.size * 2);
  };

  const current = (
    key: string,
    windowMs: number,
  ): { entry: MemoryEntry | undefined; resetAt: number; now: number } => {
    const now = clock();
    const resetAt = (windowIndex(now, windowMs) + 1) * windowMs;
    const entry = entries.get(key);
    // An entry from another window (or another windowMs for the same key) counts as absent.
    return { entry: entry?.resetAt === resetAt ? entry : undefined, resetAt, now };
  };

  // `async` only turns throws into rejections: there is no await, so each body runs to completion before
  // any other caller's, which is what makes the counts exact.
  return {
    async hit(key, windowMs) {
      const { entry, resetAt, now } = current(key, windowMs);
      if (entry) {
        entry.count += 1;
        return { count: entry.count, resetAt };
      }
      // Only a key that is new to the map can grow it, so only then can a sweep be due.
      if (!entries.has(key) && entries.size >= sweepAt) sweep(now);
      entries.set(key, { resetAt, count: 1 });
      return { count: 1, resetAt };
    },
    async peek(key, windowMs) {
      const { entry, resetAt } = current(key, windowMs);
      return { count: entry?.count ?? 0, resetAt };
    },
    async release(key, windowMs) {
      const { entry } = current(key, windowMs);
      if (entry && entry.count > 0) entry.count -= 1;
    },
    status: () => ({ backend: "memory", degraded: false }),
    async close() {
      entries.clear();
    },
    size: () => entries.size,
  };
}

/**
 * Store shared by all processes. INCR is atomic in Redis, so concurrent hits from any number of processes
 * each get a distinct count. The connection is borrowed, not owned: `close` leaves it open for whoever
 * created it (it is typically shared with other users).
 */
export function createRedisCounterStore(
  redis: Redis,
  prefix: string,
  clock: () => number = Date.now,
): CounterStore {
  const locate = (key: string, windowMs: number): { redisKey: string; resetAt: number } => {
    const index = windowIndex(clock(), windowMs);
    return { redisKey: `${prefix}${key}:${index}`, resetAt: (index + 1) * windowMs };
  };

  return {
    async hit(key, windowMs) {
      const { redisKey, resetAt } = locate(key, windowMs);
      // MULTI keeps it to one round trip and guarantees the counter never exists without its expiry.
      // NX sets the TTL on the first hit only; windowMs from the first hit always outlives the window,
      // and the window index in the key name means a stale key is never read as the current one.
      // PEXPIRE ... NX needs Redis >= 7.0; an older server fails here loudly rather than leaking keys.
      const replies = await redis.multi().incr(redisKey).pexpire(redisKey, windowMs, "NX").exec();
      if (replies === null) throw new Error(`rate limiter: MULTI for ${redisKey} was aborted`);
      for (const [err] of replies) {
        if (err) throw err;
      }
      const count = replies[0]?.[1];
      if (typeof count !== "number") {
        throw new Error(`rate limiter: INCR ${redisKey} replied ${String(count)}`);
      }
      return { count, resetAt };
    },
    async peek(key, windowMs) {
      const { redisKey, resetAt } = locate(key, windowMs);
      const value = await redis.get(redisKey);
      return { count: value === null ? 0 : Number(value), resetAt };
    },
    async release(key, windowMs) {
      const { redisKey } = locate(key, windowMs);
      // Atomic and only on a live counter: a DECR of an expired key would create one without expiry.
      await redis.eval(RELEASE_SCRIPT, 1, redisKey);
    },
    status: () => ({ backend: "redis", degraded: false }),
    async close() {},
  };
}

const RELEASE_SCRIPT = `
local n = tonumber(redis.call('GET', KEYS[1]))
if n and n > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;
