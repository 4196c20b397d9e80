import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { adminCommands } from "../../src/admin/commands.ts";
import { loadConfig } from "../../src/config.ts";
import type { Metrics } from "../../src/http/metrics.ts";
import type { MetricsListener } from "../../src/http/metrics-server.ts";
import { openMetrics } from "../../src/main.ts";
import { openAdNetwork, spendApis } from "../../src/open-infrastructure.ts";
import { printOnlyMailer } from "../../src/people/mailer.ts";
import {
  backend,
  bearer,
  createTestApp,
  openTestDatabase,
  seedAccount,
  seedAdRule,
  TEST_SITE_URL,
  type TestApp,
  testSecrets,
} from "../helpers/harness.ts";

/** One sample of the Prometheus text: a metric name with exactly these labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const same =
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v);
    if (same) return Number(match[3]);
  }
  return undefined;
}

async function scrape(listener: MetricsListener): Promise<{ status: number; type: string; text: string }> {
  const response = await fetch(listener.url);
  return {
    status: response.status,
    type: response.headers.get("content-type") ?? "",
    text: await response.text(),
  };
}

describe("/metrics on METRICS_PORT", () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: TestApp;
  let metrics: Metrics;
  let listener: MetricsListener;
  let dir: string;

  before(async () => {
    db = await openTestDatabase();
    const opened = await openMetrics(loadConfig({ HOST: "127.0.0.1", METRICS_PORT: "0" }), db);
    assert.ok(opened.listener, "METRICS_PORT=0 opens a listener");
    listener = opened.listener;
    metrics = opened.metrics;
    app = await createTestApp(db, { metrics });
    dir = await mkdtemp(join(tmpdir(), "ascribe-metrics-"));
  });
  after(async () => {
    await listener.close();
    await app.close();
    await app.audit.close();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("a request increments the counter of its route pattern and status, and its histogram", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:contacts"]);
    assert.match(listener.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const labels = { method: "GET", route: "/api/v1/contacts", status: "200" };
    const before = sample((await scrape(listener)).text, "ascribe_http_requests_total", labels) ?? 0;
    for (let i = 0; i < 3; i++) {
      const r = await app.inject({ method: "GET", url: "/api/v1/contacts?limit=5", headers: bearer(key) });
      assert.equal(r.statusCode, 200);
    }
    const r401 = await app.inject({ method: "GET", url: "/api/v1/contacts" });
    assert.equal(r401.statusCode, 401);

    const scraped = await scrape(listener);
    assert.equal(scraped.status, 200);
    assert.match(scraped.type, /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(scraped.text, "ascribe_http_requests_total", labels), before + 3);
    assert.equal(sample(scraped.text, "ascribe_http_requests_total", { ...labels, status: "401" }), 1);
    assert.equal(sample(scraped.text, "ascribe_http_request_duration_seconds_count", labels), before + 3);
    assert.equal(
      sample(scraped.text, "ascribe_http_request_duration_seconds_bucket", { ...labels, le: "+Inf" }),
      before + 3,
    );
  });

  test("labels carry route patterns, never URLs: ids and unknown paths do not become labels", async () => {
    const id = randomUUID();
    await app.inject({ method: "GET", url: `/files/${id}/calls/x.wav?expires=1&signature=abc` });
    await app.inject({ method: "GET", url: `/api/v1/no-such-route/${id}` });
    const { text } = await scrape(listener);
    assert.equal(text.includes(id), false);
    assert.ok(
      (sample(text, "ascribe_http_requests_total", { method: "GET", route: "/files/*", status: "403" }) ??
        0) +
        (sample(text, "ascribe_http_requests_total", { method: "GET", route: "/files/*", status: "404" }) ??
          0) >=
        1,
    );
    assert.equal(
      sample(text, "ascribe_http_requests_total", { method: "GET", route: "(unmatched)", status: "404" }),
      1,
    );
  });

  test("beacons: accepted, and refused by reason", async () => {
    const account = await seedAccount(db);
    const beacon = (clientKey: string) =>
      app.inject({
        method: "POST",
        url: "/api/collect",
        headers: { "content-type": "text/plain;charset=UTF-8" },
        payload: JSON.stringify({
          type: "page_view",
          client_key: clientKey,
          visitor_id: "visitor-metrics1",
          url: "https://shop.example/offer",
        }),
      });
    assert.equal((await beacon(account.clientKey)).statusCode, 204);
    assert.equal((await beacon(account.clientKey)).statusCode, 204);
    assert.equal((await beacon("ck_unknownunknown12")).statusCode, 400);
    const badJson = await app.inject({
      method: "POST",
      url: "/api/collect",
      headers: { "content-type": "text/plain" },
      payload: "{not json",
    });
    assert.equal(badJson.statusCode, 400);
    const { text } = await scrape(listener);
    assert.equal(sample(text, "ascribe_beacons_total", { outcome: "accepted", reason: "" }), 2);
    assert.equal(
      sample(text, "ascribe_beacons_total", { outcome: "refused", reason: "unknown_client_key" }),
      1,
    );
    assert.equal(sample(text, "ascribe_beacons_total", { outcome: "refused", reason: "invalid_json" }), 1);
    assert.equal(
      sample(text, "ascribe_beacons_total", { outcome: "refused", reason: "invalid_beacon" }),
      undefined,
    );
  });

  test("import rows by kind and outcome, and rule runs, when the server carries the command out", async () => {
    const account = await seedAccount(db);
    const file = join(dir, "events.jsonl");
    const event = (id: string, email: string) =>
      JSON.stringify({
        id,
        event_type: "lead",
        event_datetime: "2026-03-02T09:14:00+01:00",
        contact_email: email,
      });
    await writeFile(
      file,
      [
        event("m-1", "a@example.com"),
        event("m-2", "b@example.com"),
        event("m-3", "c@example.com"),
        "{broken",
      ].join("\n"),
    );
    const network = await openAdNetwork(loadConfig({ AD_NETWORK: "fake" }));
    const context = {
      db,
      secrets: testSecrets,
      files: app.files,
      network: network.network,
      spendApis: spendApis(loadConfig({})),
      mailer: printOnlyMailer,
      siteUrl: () => TEST_SITE_URL,
      progress: () => {},
      metrics,
    };
    try {
      const summary = await adminCommands.import(context, {
        kind: "events",
        account: account.accountId,
        file,
      });
      assert.equal(summary.imported, 3);
      assert.equal(summary.errors.length, 1);
      // Imported again: the same rows are updates now (or unchanged, skipped).
      await adminCommands.import(context, { kind: "events", account: account.accountId, file });
      // One rule the engine evaluates, and one of a type it does not know: a run recorded as failed.
      await seedAdRule(db, account.accountId, {
        ruleType: "pause_high_cpl",
        params: { max_cpl: 50, min_spend: 0, days: 7 },
      });
      await seedAdRule(db, account.accountId, { ruleType: "pause_everything" });
      const runs = await adminCommands["rules.run"](context, { account: account.accountId });
      assert.equal(runs.length, 2);
    } finally {
      await network.close();
    }
    const { text } = await scrape(listener);
    assert.equal(sample(text, "ascribe_import_rows_total", { kind: "events", outcome: "imported" }), 3);
    assert.equal(sample(text, "ascribe_import_rows_total", { kind: "events", outcome: "error" }), 2);
    const again =
      (sample(text, "ascribe_import_rows_total", { kind: "events", outcome: "updated" }) ?? 0) +
      (sample(text, "ascribe_import_rows_total", { kind: "events", outcome: "skipped" }) ?? 0);
    assert.equal(again, 3);
    assert.equal(sample(text, "ascribe_rule_runs_total", { status: "ok", dry_run: "true" }), 1);
    assert.equal(sample(text, "ascribe_rule_runs_total", { status: "error", dry_run: "true" }), 1);
  });

  test("event-loop lag and process figures (prom-client's defaults); the pool on PostgreSQL only", async () => {
    await app.inject({ method: "GET", url: "/readyz" });
    const { text } = await scrape(listener);
    assert.equal(typeof sample(text, "nodejs_eventloop_lag_seconds"), "number");
    assert.equal(typeof sample(text, "process_resident_memory_bytes"), "number");
    const pool = sample(text, "ascribe_db_pool_connections");
    if (backend === "postgres") {
      assert.ok(pool !== undefined && pool >= 1, `pool connections ${pool}`);
      assert.equal(typeof sample(text, "ascribe_db_pool_idle_connections"), "number");
      assert.equal(sample(text, "ascribe_db_pool_waiting_requests"), 0);
    } else {
      assert.equal(pool, undefined);
    }
  });

  test("the listener serves /metrics only; the site does not serve it", async () => {
    const other = await fetch(listener.url.replace(/\/metrics$/, "/healthz"));
    assert.equal(other.status, 404);
    await other.text();
    const onSite = await app.inject({ method: "GET", url: "/metrics" });
    assert.equal(onSite.statusCode, 404);
  });
});

test("without METRICS_PORT: no listener, nothing counted", async () => {
  const db = await openTestDatabase();
  try {
    const opened = await openMetrics(loadConfig({ HOST: "127.0.0.1" }), db);
    assert.equal(opened.listener, null);
    opened.metrics.request({ method: "GET", route: "/x", status: 200, seconds: 0.01 });
    assert.equal((await opened.metrics.render()).body, "");
  } finally {
    await db.close();
  }
});

test("two metric sets in one process keep their own registries", async () => {
  const db = await openTestDatabase();
  const a = await openMetrics(loadConfig({ HOST: "127.0.0.1", METRICS_PORT: "0" }), db);
  const b = await openMetrics(loadConfig({ HOST: "127.0.0.1", METRICS_PORT: "0" }), db);
  try {
    assert.ok(a.listener && b.listener);
    a.metrics.request({ method: "GET", route: "/healthz", status: 200, seconds: 0.001 });
    const labels = { method: "GET", route: "/healthz", status: "200" };
    assert.equal(sample((await scrape(a.listener)).text, "ascribe_http_requests_total", labels), 1);
    assert.equal(sample((await scrape(b.listener)).text, "ascribe_http_requests_total", labels), undefined);
  } finally {
    await a.listener?.close();
    await b.listener?.close();
    await db.close();
  }
});
