import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rotateWebhookSecret } from "../../src/admin/webhook-secret.ts";
import { jsonDepth, MAX_JSON_DEPTH, readJsonBody } from "../../src/http/json-body.ts";
import { signPayload } from "../../src/ingest/webhook-signature.ts";
import { bearer, seedAccount, testSecrets, useTestApp } from "../helpers/harness.ts";

const t = useTestApp();

/** `{ "a": { "a": … leaf } }`, `levels` objects deep (the leaf itself adds none). */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

const TOO_DEEP = { error: "body nests deeper than 32 levels" };

let ip = 0;
const nextIp = () => {
  ip += 1;
  return `10.77.${Math.floor(ip / 250)}.${ip % 250}`;
};

describe("JSON bodies: depth and size bounded on every write", () => {
  test("jsonDepth counts containers, the body being level 1, and walks a deep value without recursing", () => {
    assert.equal(jsonDepth(1), 0);
    assert.equal(jsonDepth({}), 1);
    assert.equal(jsonDepth({ a: [1, { b: "x" }] }), 3);
    assert.equal(jsonDepth([[], [[[]]]]), 4);
    assert.equal(MAX_JSON_DEPTH, 32);
    // 200,000 levels of arrays: a recursive walk overflows the stack; this one stops past the bound.
    const raw = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const read = readJsonBody(raw);
    assert.equal(read.ok, false);
    assert.equal(read.ok ? "" : read.reason, "depth");
    assert.equal(readJsonBody("{").ok ? "" : "syntax", "syntax");
  });

  test("PUT /icp 3,000 levels deep → 400 naming the bound; what was stored before still reads", async () => {
    const key = await (await seedAccount(t.db)).key(["*"]);
    assert.equal((await t.send("PUT", "/icp", key, { icp: { industries: ["coaching"] } })).statusCode, 200);
    const deep = await t.send("PUT", "/icp", key, { icp: nested(3_000) });
    assert.equal(deep.statusCode, 400);
    assert.deepEqual(deep.json(), TOO_DEEP);
    const read = await t.get(key, "/icp/criteria");
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, { data: { industries: ["coaching"] } });
  });

  test("the bound itself: a body 32 levels deep is stored and read back, 33 is refused", async () => {
    const key = await (await seedAccount(t.db)).key(["*"]);
    // The body (level 1) holding 31 nested objects: 32 levels.
    const atBound = { icp: nested(31) as Record<string, unknown> };
    const ok = await t.send("PUT", "/icp", key, atBound);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual((await t.get(key, "/icp/criteria")).body, { data: atBound.icp });
    const over = await t.send("PUT", "/icp", key, { icp: nested(32) });
    assert.deepEqual([over.statusCode, over.json()], [400, TOO_DEEP]);
  });

  test("a body over 1 MiB → 400 naming the size; nothing stored", async () => {
    const key = await (await seedAccount(t.db)).key(["*"]);
    const big = await t.send("PUT", "/icp", key, { icp: { notes: "x".repeat(1024 * 1024) } });
    assert.equal(big.statusCode, 400);
    assert.deepEqual(big.json(), { error: "request body exceeds 1048576 bytes" });
    assert.deepEqual((await t.get(key, "/icp/criteria")).body, { data: {} });
  });

  test("webhooks: a signed event batch nested too deep → 400, nothing ingested", async () => {
    const account = await seedAccount(t.db);
    const { secret } = await rotateWebhookSecret(t.db, testSecrets, { account: account.accountId });
    const event = {
      id: "deep-1",
      event_type: "lead",
      event_datetime: "2026-03-01T11:00:00Z",
      extra: nested(100),
    };
    const body = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const res = await t.app.inject({
      method: "POST",
      url: `/api/webhook/events?client_key=${account.clientKey}`,
      headers: { "content-type": "application/json", "x-ascribe-signature": signPayload(secret, body, now) },
      payload: body,
      remoteAddress: nextIp(),
    });
    assert.deepEqual([res.statusCode, res.json()], [400, TOO_DEEP]);
    const key = await account.key(["*"]);
    assert.deepEqual((await t.get(key, "/events")).body, { data: [] });
  });

  test("/api/collect: a beacon nested too deep → 400", async () => {
    const account = await seedAccount(t.db);
    const beacon = {
      type: "page_view",
      client_key: account.clientKey,
      visitor_id: "visitor-deep",
      url: "https://example.com/",
      extra: JSON.parse(`${"[".repeat(2_000)}${"]".repeat(2_000)}`),
    };
    const res = await t.app.inject({
      method: "POST",
      url: "/api/collect",
      headers: { "content-type": "text/plain;charset=UTF-8" },
      payload: JSON.stringify(beacon),
      remoteAddress: nextIp(),
    });
    assert.deepEqual([res.statusCode, res.json()], [400, TOO_DEEP]);
  });

  test("MCP: a tool call whose arguments nest too deep → 400 before any tool runs; nothing stored", async () => {
    const key = await (await seedAccount(t.db)).key(["*"]);
    const call = (args: unknown) =>
      t.app.inject({
        method: "POST",
        url: "/mcp",
        headers: {
          ...bearer(key),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        payload: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "set_icp_criteria", arguments: args },
        }),
      });
    const deep = await call({ icp: nested(3_000) });
    assert.deepEqual([deep.statusCode, deep.json()], [400, TOO_DEEP]);
    assert.deepEqual((await t.get(key, "/icp/criteria")).body, { data: {} });
    // Within the /mcp body's bound but not the route's is impossible (the envelope adds levels);
    // a small one goes through to the route.
    const fine = await call({ icp: { industries: ["coaching"] } });
    assert.equal(fine.statusCode, 200, fine.body);
    assert.deepEqual((await t.get(key, "/icp/criteria")).body, {
      data: { industries: ["coaching"] },
    });
  });
});
