import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { createMetrics } from "../../src/http/metrics.ts";
import { createTestApp, openTestDatabase, seedAccount, type TestApp } from "../helpers/harness.ts";

/*
 * Load shedding on a real server: while the event loop stalls, requests are refused at once with
 * 503 overloaded and Retry-After, the probes still answer, and service resumes when the loop does.
 */

const metrics = createMetrics();
let db: Awaited<ReturnType<typeof openTestDatabase>>;
let app: TestApp;
let base = "";
let key = "";

before(async () => {
  db = await openTestDatabase();
  key = await (await seedAccount(db)).key();
  app = await createTestApp(db, {
    metrics,
    // A short window so that the test's stall shows within a fraction of a second; a limit well
    // above what a busy test machine's loop shows, well below the stall.
    loadShedding: {
      maxEventLoopDelayMs: 300,
      maxEventLoopUtilization: 0,
      retryAfterSeconds: 7,
      sampleIntervalMs: 200,
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

/** Busy-waits `ms` on this thread, the server's: nothing else runs meanwhile. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning
  }
}

/**
 * Stalls of 1 s with one loop turn between them: each sample window then holds only ~1 s delays,
 * whatever the timers' order, so the loop reads as stalled until a window after the last.
 */
async function stallRepeatedly(times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    stall(1_000);
    await nextTurn();
  }
}

/** Waits (up to 10 s) until `path` answers something else than 503; that status. */
async function servedAgain(path: string): Promise<number> {
  const deadline = performance.now() + 10_000;
  let status = 503;
  while (status === 503 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = (await get(path)).status;
  }
  return status;
}

/** `ascribe_http_requests_shed_total{reason="event_loop_delay"}` as scraped; 0 before the first. */
async function shedCount(): Promise<number> {
  const scraped = (await metrics.render()).body;
  const line = /^ascribe_http_requests_shed_total\{reason="event_loop_delay"\} (\d+)$/m.exec(scraped);
  return Number(line?.[1] ?? 0);
}

async function get(path: string, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, { headers });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

test("a stalled event loop: 503 overloaded with Retry-After at once, the probes answer, then service resumes", async () => {
  // Start-up (migrations, the seed) runs on this loop too: served once it has settled.
  assert.equal(await servedAgain("/api/v1"), 200, "served before the stall");
  const keyed = { authorization: `Bearer ${key}` };
  assert.equal((await get("/api/v1/icp/criteria", keyed)).status, 200);

  const shedBefore = await shedCount();
  await stallRepeatedly(3);
  const started = performance.now();
  const [index, criteria, healthz, readyz] = await Promise.all([
    get("/api/v1"),
    get("/api/v1/icp/criteria", keyed),
    get("/healthz"),
    get("/readyz"),
  ]);
  const tookMs = performance.now() - started;

  for (const refused of [index, criteria]) {
    assert.equal(refused.status, 503);
    assert.deepEqual(JSON.parse(refused.text), { error: "overloaded", retry_after_seconds: 7 });
    assert.equal(refused.headers.get("retry-after"), "7");
    assert.match(refused.headers.get("content-type") ?? "", /^application\/json/);
    // The headers of every answer.
    assert.equal(refused.headers.get("cache-control"), "private, no-store");
    assert.equal(refused.headers.get("x-content-type-options"), "nosniff");
    assert.equal(refused.headers.get("x-ratelimit-limit"), "600");
    assert.equal(refused.headers.get("access-control-allow-origin"), "*");
    assert.ok(refused.headers.get("x-request-id"));
  }
  // Refused before the key was read: the window's count is untouched.
  assert.equal(criteria.headers.get("x-ratelimit-remaining"), "600");
  assert.ok(tookMs < 1_000, `answered at once, not queued (${tookMs.toFixed(0)} ms)`);

  assert.equal(healthz.status, 200, "liveness is never shed");
  assert.equal(readyz.status, 200, "readiness is never shed");

  assert.equal(await shedCount(), shedBefore + 2, "both refusals counted");

  // The loop turns again: within a couple of sample windows, requests are served.
  assert.equal(await servedAgain("/api/v1"), 200, "served again once the loop recovers");
  const again = await get("/api/v1/icp/criteria", keyed);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get("retry-after"), null);
});

test("limits at 0 turn load shedding off: a stalled loop still serves", async () => {
  const off = await createTestApp(db, {
    loadShedding: {
      maxEventLoopDelayMs: 0,
      maxEventLoopUtilization: 0,
      retryAfterSeconds: 7,
      sampleIntervalMs: 200,
    },
  });
  try {
    await off.listen({ host: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(off.server.address() as AddressInfo).port}/api/v1`;
    assert.equal((await fetch(url)).status, 200);
    await stallRepeatedly(3);
    assert.equal((await fetch(url)).status, 200);
  } finally {
    await off.close();
    await off.audit.close();
  }
});
