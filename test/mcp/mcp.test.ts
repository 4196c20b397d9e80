import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sql } from "drizzle-orm";
import { hashApiKey } from "../../src/auth/api-key.ts";
import { rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { keyStoreFor } from "../../src/main.ts";
import {
  createTestApp,
  openTestDatabase,
  seedAccount,
  seedAdRule,
  type TestApp,
} from "../helpers/harness.ts";

/*
 * The MCP server through the official SDK client over Streamable HTTP, on a real socket: every tool
 * call runs its REST route, so the route's scope, plan, rate limit and audit answer for it.
 */

// One fixed window for the whole file: a rate-limit test filled to 600 cannot straddle two windows.
const counters = createMemoryCounterStore(() => 1_800_000_000_000);
let db: Awaited<ReturnType<typeof openTestDatabase>>;
let app: TestApp;
let mcpUrl: URL;

before(async () => {
  db = await openTestDatabase();
  app = await createTestApp(db, { counters });
  await app.listen({ port: 0, host: "127.0.0.1" });
  mcpUrl = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`);
});
after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

const open: Client[] = [];
after(async () => {
  for (const client of open) await client.close();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "ascribe-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  open.push(client);
  return client;
}

async function keyId(key: string): Promise<string> {
  const record = await keyStoreFor(db).find(hashApiKey(key));
  if (!record) throw new Error("no such key");
  return record.key_id;
}

describe("MCP over Streamable HTTP", () => {
  test("tools/list: one tool per route the key's scopes cover, calls included, with hints", async () => {
    const account = await seedAccount(db);
    const client = await connect(await account.key(["read:dashboard", "write:goals"]));
    const listed = await client.listTools();
    assert.deepEqual(
      listed.tools.map((tool) => tool.name),
      ["get_dashboard_kpis", "get_dashboard_daily", "get_dashboard_breakdowns", "set_goals"],
    );
    const goals = listed.tools.find((tool) => tool.name === "set_goals");
    assert.deepEqual(goals?.annotations, {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    assert.deepEqual(goals?.inputSchema.required, ["goals"]);
    assert.match(client.getInstructions() ?? "", /timezone \(UTC\)/);

    const other = await connect(await account.key(["read:ads", "write:ads", "read:calls"]));
    const second = await other.listTools();
    assert.deepEqual(
      second.tools.map((tool) => [
        tool.name,
        tool.annotations?.readOnlyHint,
        tool.annotations?.destructiveHint,
      ]),
      [
        ["get_ads_spend", true, false],
        ["get_ads_campaigns", true, false],
        ["get_ads_rules", true, false],
        ["get_ads_rules_runs", true, false],
        ["enable_ad_rule", false, false],
        ["set_ad_rule_dry_run", false, true],
        ["delete_ad_rule", false, true],
        ["get_contacts_calls", true, false],
        ["get_calls", true, false],
        ["get_calls_transcript", true, false],
        ["get_calls_recording", true, false],
      ],
    );
    const runs = second.tools.find((tool) => tool.name === "get_ads_rules_runs");
    assert.deepEqual(runs?.inputSchema, {
      type: "object",
      properties: {
        rule_id: {
          type: "string",
          format: "uuid",
          pattern: "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$",
        },
        limit: { type: "string", pattern: "^-?\\d+$" },
      },
    });
  });

  test("a write tool then a read tool: results as structured content", async () => {
    const account = await seedAccount(db);
    const client = await connect(await account.key(["read:icp", "write:icp", "write:goals"]));
    const written = await client.callTool({
      name: "set_icp_criteria",
      arguments: { icp: { countries: ["FR", "BE"], industries: ["coaching"] } },
    });
    assert.equal(written.isError, undefined);
    assert.deepEqual(written.structuredContent, { data: { success: true } });

    const read = await client.callTool({ name: "get_icp_criteria", arguments: {} });
    assert.deepEqual(read.structuredContent, { data: { countries: ["FR", "BE"], industries: ["coaching"] } });
    assert.deepEqual(read.content, [
      { type: "text", text: '{"data":{"countries":["FR","BE"],"industries":["coaching"]}}' },
    ]);

    const goals = await client.callTool({
      name: "set_goals",
      arguments: { goals: [{ metric_key: "leads", target_value: 120 }] },
    });
    assert.deepEqual(goals.structuredContent, { data: { success: true } });
    const stored = await db.admin(account.accountId, (tx) =>
      rows<{ metric_key: string; target_value: number }>(
        tx,
        sql`select metric_key, target_value::float8 as target_value from kpi_goals where account_id = ${account.accountId}`,
      ),
    );
    assert.deepEqual(stored, [{ metric_key: "leads", target_value: 120 }]);
  });

  test("query arguments: numbers are sent as text; a bad one is the route's 400 as a tool error", async () => {
    const account = await seedAccount(db);
    const client = await connect(await account.key(["read:dashboard", "read:ads"]));
    const daily = await client.callTool({
      name: "get_dashboard_daily",
      arguments: { from: "2026-03-01", to: "2026-03-02" },
    });
    const data = (daily.structuredContent as { data: { report_date: string; leads: number }[] }).data;
    assert.deepEqual(
      data.map((row) => [row.report_date, row.leads]),
      [
        ["2026-03-01", 0],
        ["2026-03-02", 0],
      ],
    );
    const runs = await client.callTool({ name: "get_ads_rules_runs", arguments: { limit: 5 } });
    assert.deepEqual(runs.structuredContent, { data: [] });

    const bad = await client.callTool({ name: "get_dashboard_breakdowns", arguments: { dim: "country" } });
    assert.equal(bad.isError, true);
    assert.deepEqual(bad.structuredContent, {
      error: "dim: must be one of source, campaign, product, rep",
      status: 400,
    });
  });

  test("a tool outside the key's scopes: insufficient_scope naming the scope; an unknown tool", async () => {
    const account = await seedAccount(db);
    const client = await connect(await account.key(["read:dashboard"]));
    const refused = await client.callTool({ name: "get_ads_spend", arguments: {} });
    assert.equal(refused.isError, true);
    assert.deepEqual(refused.structuredContent, {
      error: "insufficient_scope",
      required: "read:ads",
      status: 403,
    });
    assert.deepEqual(refused.content, [
      { type: "text", text: '{"error":"insufficient_scope","required":"read:ads","status":403}' },
    ]);
    await assert.rejects(
      client.callTool({ name: "drop_everything", arguments: {} }),
      /Unknown tool: drop_everything/,
    );
  });

  test("deleting a rule of another account: the route's forbidden", async () => {
    const mine = await seedAccount(db);
    const theirs = await seedAccount(db);
    const theirRule = await seedAdRule(db, theirs.accountId);
    const client = await connect(await mine.key(["write:ads"]));
    const refused = await client.callTool({ name: "delete_ad_rule", arguments: { rule_id: theirRule } });
    assert.deepEqual(refused.structuredContent, { error: "forbidden", status: 403 });
    const own = await seedAdRule(db, mine.accountId);
    const deleted = await client.callTool({ name: "delete_ad_rule", arguments: { rule_id: own } });
    assert.equal(deleted.isError, undefined, JSON.stringify(deleted.structuredContent));
  });

  test("free plan: no connection at all, and a session whose account went free is refused", async () => {
    const free = await seedAccount(db);
    const freeKey = await free.key(["*"]);
    const client = await connect(freeKey);
    await free.setPlan("free");
    await assert.rejects(client.callTool({ name: "get_icp_criteria", arguments: {} }), (err: Error) => {
      assert.equal(
        err.message,
        'Streamable HTTP error: Error POSTing to endpoint: {"error":"plan_free_no_api"}',
      );
      return true;
    });
    await assert.rejects(connect(freeKey), /plan_free_no_api/);
  });

  test("no key or a bad key: 401 before any MCP message is read", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: `Bearer svc_sk_live_${"A".repeat(32)}` },
    ];
    for (const headers of attempts) {
      const client = new Client({ name: "ascribe-test", version: "1.0.0" });
      await assert.rejects(
        client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } })),
        /invalid_or_missing_api_key/,
      );
    }
  });

  test("rate limit: a tool call counts once, against the route; past 600 a rate_limited tool error", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const id = await keyId(key);
    const client = await connect(key); // initialize + notifications/initialized: 2
    await client.listTools(); // 3
    await client.callTool({ name: "get_icp_criteria", arguments: {} }); // 4
    assert.equal((await counters.peek(`rate:${id}`, 60_000)).count, 4);
    // A bare tool call: the /mcp answer reports what the route's count left.
    const raw = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "get_icp_criteria", arguments: {} },
      }),
    });
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get("x-ratelimit-remaining"), "595");
    assert.deepEqual(await raw.json(), {
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: '{"data":{}}' }], structuredContent: { data: {} } },
    });

    while ((await counters.peek(`rate:${id}`, 60_000)).count < 600) await counters.hit(`rate:${id}`, 60_000);
    const limited = await client.callTool({ name: "get_icp_criteria", arguments: {} });
    assert.equal(limited.isError, true);
    assert.deepEqual(limited.structuredContent, {
      error: "rate_limited",
      retry_after_seconds: 60,
      status: 429,
    });
    // Anything else on /mcp is refused at the door.
    await assert.rejects(client.listTools(), /HTTP 429|rate_limited/);
  });

  test("audit: each MCP request is a row; a tool call is its route's row, with the caller's address", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:dashboard"]);
    const client = await connect(key);
    await client.listTools();
    await client.callTool({
      name: "get_dashboard_kpis",
      arguments: { from: "2026-03-01", to: "2026-03-31" },
    });
    await client.callTool({ name: "get_ads_spend", arguments: {} });
    await app.audit.flush();
    const audited = await db.admin(account.accountId, (tx) =>
      rows<{ method: string; path: string; scope: string; status: number; ip: string; key_id: string }>(
        tx,
        sql`select method, path, scope, status, ip, key_id from audit_log
            where account_id = ${account.accountId} order by id`,
      ),
    );
    const id = await keyId(key);
    assert.deepEqual(audited, [
      { method: "POST", path: "/mcp", scope: "", status: 200, ip: "127.0.0.1", key_id: id },
      { method: "POST", path: "/mcp", scope: "", status: 202, ip: "127.0.0.1", key_id: id },
      { method: "POST", path: "/mcp", scope: "", status: 200, ip: "127.0.0.1", key_id: id },
      {
        method: "GET",
        path: "/api/v1/dashboard/kpis",
        scope: "read:dashboard",
        status: 200,
        ip: "127.0.0.1",
        key_id: id,
      },
      {
        method: "GET",
        path: "/api/v1/ads/spend",
        scope: "read:ads",
        status: 403,
        ip: "127.0.0.1",
        key_id: id,
      },
    ]);
  });

  test("GET and DELETE /mcp: 405 (stateless: no stream, no session)", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const res = await app.inject({ method, url: "/mcp" });
      assert.equal(res.statusCode, 405);
      assert.deepEqual(res.json(), { error: "method_not_allowed", allowed: ["POST"] });
    }
  });
});
