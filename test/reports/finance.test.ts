import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PNL_EXTRA_FRAGMENTS } from "../../src/http/redact.ts";
import { dashboardRoutes } from "../../src/routes/dashboard.ts";
import { financeRoutes } from "../../src/routes/finance.ts";
import type { RouteDef } from "../../src/routes/route-def.ts";
import { createTestApp, seedAccount, useTestApp } from "../helpers/harness.ts";
import { type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now, routes: [...dashboardRoutes, ...financeRoutes] });

const WINDOW = "from=2026-02-01&to=2026-04-15";
const spendRow = (date: string, total_spend: number) => ({
  platform: "meta",
  ad_id: "A1",
  ad_name: "Ad One",
  date,
  total_spend,
});

/** A Europe/Paris account (UTC+1 in winter, +2 from March 29); figures below worked out by hand. */
const books: Fixture = {
  spend: [
    spendRow("2026-01-31", 100), // before the window
    spendRow("2026-02-01", 40),
    spendRow("2026-03-31", 60),
    spendRow("2026-04-15", 25),
    spendRow("2026-04-16", 1000), // after the window
  ],
  events: [
    // ann: sale in February with a March installment and an April refund → all on February
    {
      id: "s1",
      event_type: "sale",
      event_datetime: "2026-02-10T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 1000,
      product_key: "a",
    },
    {
      id: "p1",
      event_type: "payment",
      event_datetime: "2026-03-05T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 500,
      payment_status: "paid",
      product_key: "a",
    },
    {
      id: "r1",
      event_type: "payment",
      event_datetime: "2026-04-02T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 300,
      payment_status: "refunded",
      product_key: "a",
    },
    // bob: Feb 28 23:30 UTC is March 1 00:30 in Paris → March; its dispute too
    {
      id: "s2",
      event_type: "sale",
      event_datetime: "2026-02-28T23:30:00Z",
      contact_email: "bob@x.test",
      amount: 800,
    },
    {
      id: "d1",
      event_type: "payment",
      event_datetime: "2026-03-10T10:00:00Z",
      contact_email: "bob@x.test",
      amount: 100,
      payment_status: "disputed",
    },
    // cat: Jan 31 23:30 UTC is February 1 in Paris → inside the window
    {
      id: "s3",
      event_type: "sale",
      event_datetime: "2026-01-31T23:30:00Z",
      contact_email: "cat@x.test",
      amount: 999,
    },
    // dan: April 15 22:30 UTC is April 16 in Paris → after the window
    {
      id: "s4",
      event_type: "sale",
      event_datetime: "2026-04-15T22:30:00Z",
      contact_email: "dan@x.test",
      amount: 50,
    },
    {
      id: "s5",
      event_type: "sale",
      event_datetime: "2026-04-03T10:00:00Z",
      contact_email: "eve@x.test",
      amount: 200,
    },
    {
      id: "s6",
      event_type: "sale",
      event_datetime: "2026-03-15T10:00:00Z",
      contact_email: "fay@x.test",
      amount: 5000,
      is_baseline: true,
    },
  ],
  purchases: [
    {
      id: "pu1",
      purchase_date: "2026-02-10T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 1000,
      commissionable: true,
      commission_amount: 100,
    },
    {
      id: "pu2",
      purchase_date: "2026-03-05T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 333.33,
      commissionable: true,
      commission_rate: 0.15, // 49.9995 → 50.00
    },
    {
      id: "pu3",
      purchase_date: "2026-03-20T10:00:00Z",
      contact_email: "bob@x.test",
      amount: 800,
      commissionable: false,
      commission_amount: 80, // not commissionable: no commission
    },
    {
      id: "pu4",
      purchase_date: "2026-02-28T23:30:00Z", // March 1 in Paris
      contact_email: "cat@x.test",
      amount: 200,
      commissionable: true,
      commission_rate: 0.1,
    },
    {
      id: "pu5",
      purchase_date: "2026-04-10T10:00:00Z",
      contact_email: "dan@x.test",
      amount: 100,
      commissionable: true, // neither amount nor rate: 0
    },
  ],
};

describe("GET /finance/pnl", () => {
  test("totals and months, worked out by hand (account timezone Europe/Paris)", async () => {
    const account = await seedAccount(env.db, { timezone: "Europe/Paris" });
    await loadFixture(env.db, account.accountId, books);
    const r = await env.get(await account.key(["read:finance"]), `/finance/pnl?${WINDOW}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      data: {
        from: "2026-02-01",
        to: "2026-04-15",
        revenue: 3499, // s1 1000 + p1 500, s2 800, s3 999, s5 200; s4 after the window, s6 baseline
        refunds: 300,
        disputes: 100,
        net_revenue: 3099,
        ad_spend: 125, // 40 + 60 + 25
        commissions: 170, // pu1 100, pu2 50, pu4 20
        result: 2804, // 3099 − 125 − 170
        by_month: [
          {
            month: "2026-02",
            revenue: 2499, // s1 group 1500 + s3 999
            refunds: 300,
            disputes: 0,
            net_revenue: 2199,
            ad_spend: 40,
            commissions: 100,
            result: 2059,
          },
          {
            month: "2026-03",
            revenue: 800,
            refunds: 0,
            disputes: 100,
            net_revenue: 700,
            ad_spend: 60,
            commissions: 70, // pu2 50 + pu4 20
            result: 570,
          },
          {
            month: "2026-04", // April 1–15 only
            revenue: 200,
            refunds: 0,
            disputes: 0,
            net_revenue: 200,
            ad_spend: 25,
            commissions: 0,
            result: 175,
          },
        ],
      },
    });
  });

  test("Σ by_month = totals, and revenue agrees with /dashboard/kpis", async () => {
    const account = await seedAccount(env.db, { timezone: "Europe/Paris" });
    await loadFixture(env.db, account.accountId, books);
    const key = await account.key(["read:finance", "read:dashboard"]);
    const fields = ["revenue", "refunds", "disputes", "net_revenue", "ad_spend", "commissions", "result"];
    for (const window of [WINDOW, "from=2026-01-15&to=2026-03-01", "from=2026-03-01&to=2026-03-01", ""]) {
      const p = (await env.get(key, `/finance/pnl?${window}`)).body.data;
      for (const f of fields) {
        const sum = p.by_month.reduce((s: number, m: Record<string, number>) => s + (m[f] ?? 0), 0);
        assert.equal(Math.round(sum * 100) / 100, p[f], `${window} ${f}`);
      }
      const d = (await env.get(key, `/dashboard/kpis?${window}`)).body.data;
      assert.deepEqual(
        [p.revenue, p.refunds, p.disputes, p.net_revenue, p.ad_spend],
        [d.revenue, d.refund_amount, d.dispute_amount, d.net_revenue, d.spend],
        window,
      );
    }
  });

  test("no parameters on an empty account: zeros over the default window's months", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:finance"]), "/finance/pnl");
    assert.equal(r.status, 200);
    assert.equal(r.body.data.result, 0);
    assert.deepEqual(
      r.body.data.by_month.map((m: { month: string }) => m.month),
      ["2026-03"], // March 2–31
    );
  });

  test("the route strips margin, profit, wholesale, markup, cost_of and cogs fields at every level", async () => {
    const [pnl] = financeRoutes as RouteDef[];
    assert.ok(pnl);
    assert.deepEqual(pnl.redactFragments, PNL_EXTRA_FRAGMENTS);
    assert.deepEqual(
      [...PNL_EXTRA_FRAGMENTS],
      ["margin", "profit", "wholesale", "markup", "cost_of", "cogs"],
    );
    // The same route with a handler that (wrongly) adds such fields: the pipeline must drop them.
    const leaky: RouteDef = {
      ...pnl,
      handler: async (ctx) => {
        const data = (await pnl.handler(ctx)) as Record<string, unknown> & { by_month: object[] };
        return {
          ...data,
          agency_margin_rate: 0.3,
          profit: 1,
          cogs_total: 2,
          by_month: data.by_month.map((m) => ({ ...m, cost_of_sales: 3, markup: 4, wholesale_price: 5 })),
        };
      },
    };
    const leakyApp = await createTestApp(env.db, { clock: () => now, routes: [leaky] });
    try {
      const account = await seedAccount(env.db);
      const r = await env.get(await account.key(["read:finance"]), "/finance/pnl", leakyApp);
      assert.equal(r.status, 200);
      const keys = JSON.stringify(r.body);
      for (const fragment of ["margin", "profit", "cogs", "cost_of", "markup", "wholesale"]) {
        assert.ok(!keys.includes(fragment), fragment);
      }
      assert.equal(r.body.data.result, 0); // the route's own fields are kept
      assert.deepEqual(Object.keys(r.body.data.by_month[0]).sort(), [
        "ad_spend",
        "commissions",
        "disputes",
        "month",
        "net_revenue",
        "refunds",
        "result",
        "revenue",
      ]);
    } finally {
      await leakyApp.close();
      await leakyApp.audit.close();
    }
  });

  test("malformed dates and from after to: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:finance"]);
    assert.deepEqual(await env.get(key, "/finance/pnl?to=2026-13-01"), {
      status: 400,
      body: { error: "to: is not a calendar date" },
    });
    assert.deepEqual(await env.get(key, "/finance/pnl?from=03/01/2026"), {
      status: 400,
      body: { error: "from: must be a date YYYY-MM-DD" },
    });
    assert.deepEqual(await env.get(key, "/finance/pnl?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});
