import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });

/** One contact buys the same product twice 5 days apart: one purchase or two, by the rule. */
const twoSales = {
  events: [
    { id: "l1", event_type: "lead", event_datetime: at("2026-03-01"), contact_email: "ann@x.test" },
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-10"),
      contact_email: "ann@x.test",
      amount: 1000,
      product_key: "coaching",
    },
    {
      id: "s2",
      event_type: "sale",
      event_datetime: at("2026-03-15"),
      contact_email: "ann@x.test",
      amount: 400,
      product_key: "coaching",
    },
  ],
};

const send = env.send;

async function salesState(key: string) {
  const events = (await send("GET", "/events?type=sale&from=2026-03-01&to=2026-03-31", key)).json().data as {
    id: string;
    counted: boolean;
    drop_reason: string | null;
  }[];
  const kpis = (await send("GET", "/dashboard/kpis?from=2026-03-01&to=2026-03-31", key)).json().data;
  return {
    events: events.map((e) => ({ id: e.id, counted: e.counted, drop_reason: e.drop_reason })),
    total_sales: kpis.total_sales,
    revenue: kpis.revenue,
  };
}

describe("PUT|POST /sale-rule", () => {
  test("a new rule recounts at once: /events and the dashboard follow", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, twoSales);
    const key = await account.key(["write:settings", "read:events", "read:dashboard"]);
    // Default rule: the second sale of the product within 30 days joins the first purchase.
    assert.deepEqual(await salesState(key), {
      events: [
        { id: "s2", counted: false, drop_reason: "duplicate" },
        { id: "s1", counted: true, drop_reason: null },
      ],
      total_sales: 1,
      revenue: 1400,
    });

    const put = await send("PUT", "/sale-rule", key, { sale_rule: { dedupe: "none" } });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json(), {
      data: {
        success: true,
        sale_rule: {
          source: "both",
          dedupe: "none",
          window_days: 30,
          revenue: "amount",
          exclude_baseline: true,
        },
        recounted_events: 2,
      },
    });
    assert.deepEqual(await salesState(key), {
      events: [
        { id: "s2", counted: true, drop_reason: null },
        { id: "s1", counted: true, drop_reason: null },
      ],
      total_sales: 2,
      revenue: 1400,
    });

    // POST does the same; a window of 3 days no longer joins sales 5 days apart.
    const post = await send("POST", "/sale-rule", key, { sale_rule: { window_days: 3 } });
    assert.equal(post.statusCode, 200);
    assert.equal((await salesState(key)).total_sales, 2);
    await send("POST", "/sale-rule", key, { sale_rule: { window_days: 5 } });
    assert.equal((await salesState(key)).total_sales, 1, "exactly window_days still joins");
  });

  test("no sale_rule object → 400 missing sale_rule object; a bad field → 400 naming it; nothing changes", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, twoSales);
    const key = await account.key(["write:settings", "read:events", "read:dashboard"]);
    const before = await salesState(key);
    for (const body of [{}, { sale_rule: null }, { sale_rule: "none" }, { sale_rule: [1] }, { rule: {} }]) {
      const res = await send("PUT", "/sale-rule", key, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(res.json(), { error: "missing sale_rule object" });
    }
    const cases: [unknown, RegExp][] = [
      [{ dedupe: "bogus" }, /sale_rule\.dedupe/],
      [{ window_days: -1 }, /sale_rule\.window_days/],
      [{ window_days: 2.5 }, /sale_rule\.window_days/],
      [{ source: "refund" }, /sale_rule\.source/],
      [{ exclude_baseline: "yes" }, /sale_rule\.exclude_baseline/],
      [{ dedup: "none" }, /dedup/],
    ];
    for (const [rule, message] of cases) {
      const res = await send("PUT", "/sale-rule", key, { sale_rule: rule });
      assert.equal(res.statusCode, 400, JSON.stringify(rule));
      assert.match(res.json().error, message);
    }
    assert.deepEqual(await salesState(key), before);
  });

  test("GET → 405", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["write:settings"]);
    const res = await send("GET", "/sale-rule", key);
    assert.equal(res.statusCode, 405);
    assert.deepEqual(res.json(), { error: "method_not_allowed", allowed: ["PUT", "POST"] });
  });
});
