import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { funnelRoutes } from "../../src/routes/funnel.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now, routes: funnelRoutes });

const MARCH = "from=2026-03-01&to=2026-03-31";
const lead = (id: string, email: string, day: string, source?: string, campaign?: string) => ({
  id,
  event_type: "lead",
  event_datetime: at(day),
  contact_email: email,
  ...(source ? { utm_source: source } : {}),
  ...(campaign ? { utm_campaign: campaign } : {}),
});
const ev = (id: string, type: string, email: string, day: string, extra: Record<string, unknown> = {}) => ({
  id,
  event_type: type,
  event_datetime: at(day, (extra.time as string | undefined) ?? "10:00:00"),
  contact_email: email,
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "time")),
});

/**
 * March 2026, UTC, now = March 31 12:00. Furthest stage reached by each cohort contact:
 * u1 sale, u2 booking (its one meeting was a no-show), u3 application, u4 sale (straight from the
 * lead), u6 sale (no-show, then a show), u7 booking (meeting in April). u5 became a lead in February:
 * it belongs to February's cohort (where it reached the sale), not March's, despite a March lead.
 */
const cohort: Fixture = {
  events: [
    lead("u1l", "u1@x.test", "2026-03-02", "meta", "C1"),
    ev("u1a", "application", "u1@x.test", "2026-03-03"),
    ev("u1b", "booking", "u1@x.test", "2026-03-04", { booking_date: "2026-03-06", booking_time: "10:00" }),
    ev("u1s", "sale", "u1@x.test", "2026-03-08", {
      amount: 1000,
      product_key: "coaching",
      product_name: "Coaching",
    }),

    lead("u2l", "u2@x.test", "2026-03-05", "meta", "C1"),
    ev("u2b", "booking", "u2@x.test", "2026-03-06", { booking_date: "2026-03-10", booking_time: "10:00" }),
    ev("u2n", "no_show", "u2@x.test", "2026-03-10", { time: "11:00:00" }),

    lead("u3l", "u3@x.test", "2026-03-10", "google", "C2"),
    ev("u3a", "application", "u3@x.test", "2026-03-12"),

    lead("u4l", "u4@x.test", "2026-03-15"),
    ev("u4s", "sale", "u4@x.test", "2026-03-20", {
      amount: 100,
      product_key: "ebook",
      product_name: "E-book",
    }),

    lead("u5k", "u5@x.test", "2026-02-20", "tiktok", "C9"),
    ev("u5b", "booking", "u5@x.test", "2026-02-21", { booking_date: "2026-02-25" }),
    ev("u5s", "sale", "u5@x.test", "2026-02-28", { amount: 50 }),
    lead("u5l", "u5@x.test", "2026-03-03", "meta", "C1"),

    lead("u6l", "u6@x.test", "2026-03-20", "meta", "C2"),
    ev("u6b", "booking", "u6@x.test", "2026-03-21", { booking_date: "2026-03-23", booking_time: "10:00" }),
    ev("u6n", "no_show", "u6@x.test", "2026-03-23", { time: "11:00:00" }),
    ev("u6c", "booking", "u6@x.test", "2026-03-24", { booking_date: "2026-03-26", booking_time: "15:00" }),
    ev("u6s", "sale", "u6@x.test", "2026-03-28", {
      time: "15:00:00",
      amount: 2000,
      product_key: "coaching",
      product_name: "Coaching",
    }),

    lead("u7l", "u7@x.test", "2026-03-25", "meta", "C1"),
    ev("u7b", "booking", "u7@x.test", "2026-03-26", { booking_date: "2026-04-02" }),
  ],
};

describe("GET /funnel", () => {
  test("cohort funnel of March, worked out by hand", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, cohort);
    const r = await env.get(await account.key(["read:funnel"]), `/funnel?${MARCH}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      data: {
        from: "2026-03-01",
        to: "2026-03-31",
        stages: [
          { stage: "lead", count: 6, conversion: null },
          { stage: "application", count: 6, conversion: 1 }, // u2 u4 u6 u7 went past it
          { stage: "booking", count: 5, conversion: 0.8333 }, // u1 u2 u4 u6 u7
          { stage: "show", count: 3, conversion: 0.6 }, // u1 u4 u6; u2 no-showed, u7 is in April
          { stage: "sale", count: 3, conversion: 1 }, // u1 u4 u6
        ],
        overall_conversion: 0.5, // 3 / 6
        by_source: [
          // meta: u1(sale) u2(booking) u6(sale) u7(booking)
          { source: "meta", leads: 4, applications: 4, bookings: 4, shows: 2, sales: 2, conversion: 0.5 },
          { source: "google", leads: 1, applications: 1, bookings: 0, shows: 0, sales: 0, conversion: 0 },
          { source: null, leads: 1, applications: 1, bookings: 1, shows: 1, sales: 1, conversion: 1 },
        ],
        by_campaign: [
          { campaign: "C1", leads: 3, applications: 3, bookings: 3, shows: 1, sales: 1, conversion: 0.3333 },
          { campaign: "C2", leads: 2, applications: 2, bookings: 1, shows: 1, sales: 1, conversion: 0.5 },
          { campaign: null, leads: 1, applications: 1, bookings: 1, shows: 1, sales: 1, conversion: 1 },
        ],
        by_product: [
          { product_key: "coaching", product_name: "Coaching", sales: 2, conversion: 0.3333 }, // 2 / 6 leads
          { product_key: "ebook", product_name: "E-book", sales: 1, conversion: 0.1667 },
        ],
        time_to_conversion: [
          { from_stage: "lead", to_stage: "application", median_days: 1.5, sample_size: 2 }, // u1 1, u3 2
          { from_stage: "application", to_stage: "booking", median_days: 1, sample_size: 1 }, // u1
          // u1: booked Mar 4 10:00, met Mar 6 10:00 → 2; u6: booked Mar 21 10:00, showed Mar 26 15:00 → 5.21
          { from_stage: "booking", to_stage: "show", median_days: 3.6, sample_size: 2 },
          { from_stage: "show", to_stage: "sale", median_days: 2, sample_size: 2 }, // u1 2, u6 2
        ],
      },
    });
  });

  test("a contact enters the cohort of its first lead ever, and is followed to now", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, cohort);
    const r = await env.get(await account.key(["read:funnel"]), "/funnel?from=2026-02-01&to=2026-02-28");
    assert.equal(r.status, 200);
    // u5 alone: lead Feb 20, booking Feb 21 for Feb 25 (past, no no-show: a show), sale Feb 28.
    assert.deepEqual(r.body.data.stages, [
      { stage: "lead", count: 1, conversion: null },
      { stage: "application", count: 1, conversion: 1 },
      { stage: "booking", count: 1, conversion: 1 },
      { stage: "show", count: 1, conversion: 1 },
      { stage: "sale", count: 1, conversion: 1 },
    ]);
    assert.deepEqual(r.body.data.by_source, [
      { source: "tiktok", leads: 1, applications: 1, bookings: 1, shows: 1, sales: 1, conversion: 1 },
    ]);
    assert.deepEqual(r.body.data.by_product, [
      { product_key: null, product_name: null, sales: 1, conversion: 1 },
    ]);
  });

  test("counts never increase down the stages, whatever the window", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, cohort);
    const key = await account.key(["read:funnel"]);
    for (const window of [MARCH, "from=2026-02-01&to=2026-03-31", "from=2026-03-04&to=2026-03-12", ""]) {
      const data = (await env.get(key, `/funnel?${window}`)).body.data;
      const counts = data.stages.map((s: { count: number }) => s.count);
      for (let i = 1; i < counts.length; i++) assert.ok(counts[i] <= counts[i - 1], `${window}: ${counts}`);
      for (const rows of [data.by_source, data.by_campaign]) {
        for (const g of rows) {
          assert.ok(g.leads >= g.applications && g.applications >= g.bookings, window);
          assert.ok(g.bookings >= g.shows && g.shows >= g.sales, window);
        }
        const sum = (f: string) => rows.reduce((s: number, g: Record<string, number>) => s + (g[f] ?? 0), 0);
        assert.equal(sum("leads"), counts[0], window);
        assert.equal(sum("sales"), counts[4], window);
      }
    }
  });

  test("no parameters on an empty account: zero stages, null conversions", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:funnel"]), "/funnel");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data.stages, [
      { stage: "lead", count: 0, conversion: null },
      { stage: "application", count: 0, conversion: null },
      { stage: "booking", count: 0, conversion: null },
      { stage: "show", count: 0, conversion: null },
      { stage: "sale", count: 0, conversion: null },
    ]);
    assert.equal(r.body.data.overall_conversion, null);
    assert.deepEqual(r.body.data.by_source, []);
    assert.deepEqual(r.body.data.by_product, []);
    assert.equal(r.body.data.time_to_conversion[0].median_days, null);
    assert.equal(r.body.data.time_to_conversion[0].sample_size, 0);
  });

  test("malformed dates and from after to: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:funnel"]);
    assert.deepEqual(await env.get(key, "/funnel?from=yesterday"), {
      status: 400,
      body: { error: "from: must be a date YYYY-MM-DD" },
    });
    assert.deepEqual(await env.get(key, "/funnel?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});
