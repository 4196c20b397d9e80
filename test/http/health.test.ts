import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { type CounterBackend, createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { createTestApp, openTestDatabase, seedAccount, useTestApp } from "../helpers/harness.ts";

/** A memory store that reports the backend given: what /readyz shows is what status() says. */
function countersReporting(status: CounterBackend) {
  return { ...createMemoryCounterStore(), status: () => status };
}

describe("/healthz and /readyz", () => {
  const t = useTestApp();

  test("/healthz answers 200 with no key; /readyz names each check", async () => {
    const health = await t.app.inject({ method: "GET", url: "/healthz" });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: "ok" });

    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), {
      status: "ready",
      checks: { database: "ok", migrations: "ok", counters: "memory" },
    });
  });

  test("neither is rate limited, nor counted against the failed-auth throttle", async () => {
    // 700 probes: more than the per-key limit (600) and the failed-auth limit (20) of a minute.
    for (let i = 0; i < 700; i++) {
      const r = await t.app.inject({ method: "GET", url: i % 2 ? "/healthz" : "/readyz" });
      assert.equal(r.statusCode, 200, `probe ${i}`);
    }
  });

  test("neither reads an account's data: the body is the same with accounts in the database", async () => {
    await seedAccount(t.db, { name: "Probe-invisible Ltd" });
    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.body.includes("Probe-invisible"), false);
    assert.deepEqual(Object.keys(ready.json().checks), ["database", "migrations", "counters"]);
  });

  test("migrations behind the build: 503 naming the migrations check", async () => {
    const [latest] = await t.db.admin(null, (tx) =>
      rows<{ hash: string; created_at: string; total: number }>(
        tx,
        sql`select hash, created_at::text as created_at, (select count(*)::int from drizzle.__drizzle_migrations) as total
            from drizzle.__drizzle_migrations order by created_at desc limit 1`,
      ),
    );
    assert.ok(latest);
    await t.db.admin(null, (tx) =>
      tx.execute(
        sql`delete from drizzle.__drizzle_migrations where created_at = ${latest.created_at}::bigint`,
      ),
    );
    try {
      const r = await t.app.inject({ method: "GET", url: "/readyz" });
      assert.equal(r.statusCode, 503);
      assert.deepEqual(r.json(), {
        status: "not ready",
        checks: {
          database: "ok",
          migrations: `behind (${latest.total - 1} of ${latest.total} applied)`,
          counters: "memory",
        },
      });
    } finally {
      await t.db.admin(null, (tx) =>
        tx.execute(sql`insert into drizzle.__drizzle_migrations (hash, created_at)
                       values (${latest.hash}, ${latest.created_at}::bigint)`),
      );
    }
    assert.equal((await t.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
  });

  test("a frozen database: 503 within about 2 s, not a hung probe; ready again once it answers", async () => {
    // An exclusive lock on the table the probe reads, held by an open transaction: the probe's
    // query waits as it would on a stalled server (PGlite: the transaction itself waits).
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = t.db.admin(null, async (tx) => {
      await tx.execute(sql`lock table drizzle.__drizzle_migrations in access exclusive mode`);
      locked();
      await released;
    });
    await isLocked;
    try {
      const started = performance.now();
      const [first, second] = await Promise.all([
        t.app.inject({ method: "GET", url: "/readyz" }),
        t.app.inject({ method: "GET", url: "/readyz" }),
      ]);
      const elapsed = performance.now() - started;
      assert.equal(first.statusCode, 503);
      assert.equal(second.statusCode, 503);
      assert.deepEqual(first.json().checks, {
        database: "timeout (no answer within 2000 ms)",
        migrations: "unknown",
        counters: "memory",
      });
      // The limit is 2 s; the margin is for a loaded CI machine, far below a hung probe's minutes.
      assert.ok(elapsed >= 1_900 && elapsed < 4_000, `answered in ${Math.round(elapsed)} ms`);
    } finally {
      release();
      await holder;
    }
    assert.equal((await t.app.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
  });
});

describe("/readyz: the counters' backend", () => {
  for (const [status, shown] of [
    [{ backend: "redis", degraded: false }, "redis"],
    [{ backend: "memory", degraded: true }, "memory (redis unreachable)"],
  ] as const) {
    const t = useTestApp({ counters: countersReporting(status) });
    test(`${shown}: shown, and still ready (requests are served)`, async () => {
      const r = await t.app.inject({ method: "GET", url: "/readyz" });
      assert.equal(r.statusCode, 200);
      assert.deepEqual(r.json(), {
        status: "ready",
        checks: { database: "ok", migrations: "ok", counters: shown },
      });
    });
  }
});

test("/readyz with the database closed: 503 naming the database check; /healthz still 200", async () => {
  const db = await openTestDatabase();
  const app = await createTestApp(db);
  try {
    await app.audit.close();
    await db.close();
    const r = await app.inject({ method: "GET", url: "/readyz" });
    assert.equal(r.statusCode, 503);
    assert.deepEqual(r.json(), {
      status: "not ready",
      checks: { database: "unreachable", migrations: "unknown", counters: "memory" },
    });
    assert.equal((await app.inject({ method: "GET", url: "/healthz" })).statusCode, 200);
  } finally {
    await app.close();
  }
});
