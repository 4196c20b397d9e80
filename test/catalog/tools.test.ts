import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { inputJsonSchema, toolFor, toolsFor, WRITE_TOOLS } from "../../src/catalog/tools.ts";
import { rows } from "../../src/db/client.ts";
import { routes } from "../../src/routes/index.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";

const t = useTestApp();
const BASE = "http://localhost:3000/api/v1";

interface ManifestTool {
  name: string;
  method: string;
  path: string;
  scope: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

async function manifest(key: string): Promise<ManifestTool[]> {
  const res = await t.send("GET", "/tools", key);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: { tools: ManifestTool[] } }).data.tools;
}

const line = (tool: ManifestTool) => `${tool.name} ${tool.method} ${tool.path} ${tool.scope}`;

describe("GET /tools", () => {
  test("a * key: every route but the calls and creatives ones, in registry order", async () => {
    const account = await seedAccount(t.db);
    const tools = await manifest(await account.key(["*"]));
    assert.deepEqual(tools.map(line), [
      `get_dashboard_kpis GET ${BASE}/dashboard/kpis read:dashboard`,
      `get_dashboard_daily GET ${BASE}/dashboard/daily read:dashboard`,
      `get_dashboard_breakdowns GET ${BASE}/dashboard/breakdowns read:dashboard`,
      `get_icp_criteria GET ${BASE}/icp/criteria read:icp`,
      `set_icp_criteria PUT ${BASE}/icp write:icp`,
      `set_goals PUT ${BASE}/goals write:goals`,
      `set_sale_rule PUT ${BASE}/sale-rule write:settings`,
      `get_ads_spend GET ${BASE}/ads/spend read:ads`,
      `get_ads_campaigns GET ${BASE}/ads/campaigns read:ads`,
      `get_ads_rules GET ${BASE}/ads/rules read:ads`,
      `get_ads_rules_runs GET ${BASE}/ads/rules/runs read:ads`,
      `enable_ad_rule POST ${BASE}/ads/rules/enable write:ads`,
      `set_ad_rule_dry_run POST ${BASE}/ads/rules/dry-run write:ads`,
      `delete_ad_rule POST ${BASE}/ads/rules/delete write:ads`,
      `get_events GET ${BASE}/events read:events`,
      `get_events_summary GET ${BASE}/events/summary read:events`,
      `get_attribution GET ${BASE}/attribution read:attribution`,
      `get_attribution_health GET ${BASE}/attribution/health read:attribution`,
      `get_attribution_report GET ${BASE}/attribution/report read:attribution`,
      `get_attribution_models GET ${BASE}/attribution/models read:attribution`,
      `get_sales_summary GET ${BASE}/sales/summary read:sales`,
      `get_sales_reps GET ${BASE}/sales/reps read:sales`,
      `get_sales_cycle GET ${BASE}/sales/cycle read:sales`,
      `get_finance_pnl GET ${BASE}/finance/pnl read:finance`,
      `get_funnel GET ${BASE}/funnel read:funnel`,
      `get_contacts GET ${BASE}/contacts read:contacts`,
      `get_contacts_customers GET ${BASE}/contacts/customers read:contacts`,
      `get_contacts_purchases GET ${BASE}/contacts/purchases read:contacts`,
      `get_journeys GET ${BASE}/journeys read:journeys`,
      `get_journeys_contact GET ${BASE}/journeys/contact read:journeys`,
      `get_touchpoints GET ${BASE}/touchpoints read:journeys`,
      `get_capi_pixels GET ${BASE}/capi/pixels read:capi`,
    ]);
  });

  test("a key of two scopes: only their routes, each with its description and input schema", async () => {
    const account = await seedAccount(t.db);
    const tools = await manifest(await account.key(["read:dashboard", "write:goals"]));
    assert.deepEqual(tools.map(line), [
      `get_dashboard_kpis GET ${BASE}/dashboard/kpis read:dashboard`,
      `get_dashboard_daily GET ${BASE}/dashboard/daily read:dashboard`,
      `get_dashboard_breakdowns GET ${BASE}/dashboard/breakdowns read:dashboard`,
      `set_goals PUT ${BASE}/goals write:goals`,
    ]);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const date = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" };
    assert.deepEqual(byName.get("get_dashboard_breakdowns")?.inputSchema, {
      type: "object",
      properties: {
        from: date,
        to: date,
        dim: { default: "source", type: "string", enum: ["source", "campaign", "product", "rep"] },
      },
    });
    assert.deepEqual(byName.get("set_goals")?.inputSchema, {
      type: "object",
      properties: {
        goals: {
          type: "array",
          items: {
            type: "object",
            properties: {
              metric_key: { type: "string", minLength: 1, maxLength: 100 },
              target_value: { type: "number" },
            },
            required: ["metric_key", "target_value"],
          },
        },
      },
      required: ["goals"],
    });
    assert.match(byName.get("get_dashboard_kpis")?.description ?? "", /default the last 30 days/);
  });

  test("calls and creatives scopes alone give an empty manifest; a third scope shows only its own", async () => {
    const account = await seedAccount(t.db);
    const omitted = ["read:calls", "read:creatives", "write:creatives"] as const;
    assert.deepEqual(await manifest(await account.key([...omitted])), []);
    const tools = await manifest(await account.key([...omitted, "read:ads"]));
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ["get_ads_spend", "get_ads_campaigns", "get_ads_rules", "get_ads_rules_runs"],
    );
  });

  test("the key steps of the pipeline: 401 without a key, free plan refused, 405, audited", async () => {
    const none = await t.app.inject({ url: "/api/v1/tools" });
    assert.equal(none.statusCode, 401);
    assert.deepEqual(none.json(), { error: "invalid_or_missing_api_key" });

    const free = await seedAccount(t.db);
    const freeKey = await free.key(["*"]);
    await free.setPlan("free");
    const refused = await t.send("GET", "/tools", freeKey);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(refused.json(), { error: "plan_free_no_api" });

    const account = await seedAccount(t.db);
    const key = await account.key(["read:icp"]);
    const post = await t.send("POST", "/tools", key, {});
    assert.equal(post.statusCode, 405);
    assert.deepEqual(post.json(), { error: "method_not_allowed", allowed: ["GET"] });

    const ok = await t.app.inject({ url: "/api/v1/tools", headers: { "x-api-key": key } });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers["cache-control"], "private, no-store");
    assert.equal(ok.headers["x-ratelimit-remaining"], "599");
    await t.app.audit.flush();
    const audited = await t.db.admin(account.accountId, (tx) =>
      rows<{ method: string; path: string; scope: string; status: number }>(
        tx,
        sql`select method, path, scope, status from audit_log where account_id = ${account.accountId} order by id`,
      ),
    );
    assert.deepEqual(audited, [{ method: "GET", path: "/api/v1/tools", scope: "", status: 200 }]);
  });
});

describe("tool definitions from the registry", () => {
  test("every write route is classified; names are unique, short and snake_case", () => {
    for (const route of routes.filter((r) => !r.methods.includes("GET"))) {
      assert.ok(WRITE_TOOLS[route.path], `${route.path}: add it to WRITE_TOOLS`);
    }
    const names = routes.map((route) => toolFor(route).name);
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.match(name, /^[a-z][a-z0-9_]{2,63}$/);
  });

  test("annotations: reads read-only; deleting and arming a rule destructive; other writes not", () => {
    const hints = Object.fromEntries(
      toolsFor(routes, ["*"], { manifest: false })
        .filter((tool) => tool.method !== "GET")
        .map((tool) => [tool.name, [tool.annotations.readOnlyHint, tool.annotations.destructiveHint]]),
    );
    assert.deepEqual(hints, {
      set_icp_criteria: [false, false],
      set_goals: [false, false],
      set_sale_rule: [false, false],
      enable_ad_rule: [false, false],
      set_ad_rule_dry_run: [false, true],
      delete_ad_rule: [false, true],
      ack_creative_requests: [false, false],
      create_creative_upload_url: [false, false],
      import_creative: [false, false],
    });
    for (const tool of toolsFor(routes, ["*"], { manifest: false }).filter((x) => x.method === "GET")) {
      assert.equal(tool.annotations.readOnlyHint, true, tool.name);
    }
  });

  test("descriptions tell a model the window and the paging of each route that has them", () => {
    for (const route of routes) {
      const properties = (inputJsonSchema(route).properties ?? {}) as Record<string, unknown>;
      const text = route.description;
      assert.ok(text.length >= 60, `${route.path}: a description a model can choose by`);
      if ("from" in properties) assert.match(text, /from\/to/, `${route.path}: its window`);
      // A list SPEC returns whole takes an optional limit (/contacts/customers, /contacts/purchases).
      if ("limit" in properties)
        assert.match(text, /limit (?:default \d+|optional), max \d+/, `${route.path}: paging`);
      if ("offset" in properties) assert.match(text, /offset default 0/, `${route.path}: offset`);
      if ("cursor" in properties) assert.match(text, /cursor/, `${route.path}: cursor`);
    }
  });
});
