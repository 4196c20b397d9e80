import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { dashboardRoutes } from "../../src/routes/dashboard.ts";
import { salesRoutes } from "../../src/routes/sales.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now, routes: [...dashboardRoutes, ...salesRoutes] });

const MARCH = "from=2026-03-01&to=2026-03-31";

/** March 2026 in a UTC account, now = March 31 12:00; every figure below is worked out by hand. */
const march: Fixture = {
  events: [
    { id: "l1", event_type: "lead", event_datetime: at("2026-03-02"), contact_email: "ann@x.test" },
    { id: "l2", event_type: "lead", event_datetime: at("2026-03-03"), contact_email: "bob@x.test" },
    { id: "l3", event_type: "lead", event_datetime: at("2026-02-27"), contact_email: "cat@x.test" },
    {
      id: "a1",
      event_type: "application",
      event_datetime: at("2026-03-04"),
      contact_email: "ann@x.test",
      assigned_user_name: "Alice",
    },
    { id: "a2", event_type: "application", event_datetime: at("2026-03-05"), contact_email: "dan@x.test" },
    {
      id: "b1",
      event_type: "booking",
      event_datetime: at("2026-03-05"),
      contact_email: "ann@x.test",
      booking_date: "2026-03-10",
      booking_time: "10:00",
      assigned_user_name: "Alice",
    },
    {
      id: "b2",
      event_type: "booking",
      event_datetime: at("2026-03-06"),
      contact_email: "bob@x.test",
      booking_date: "2026-04-02",
      assigned_user_name: "Bruno",
    },
    {
      id: "b3",
      event_type: "booking",
      event_datetime: at("2026-02-25"),
      contact_email: "cat@x.test",
      booking_date: "2026-03-03",
      assigned_user_name: "Bruno",
    },
    {
      id: "b4",
      event_type: "booking",
      event_datetime: at("2026-03-20"),
      contact_email: "fay@x.test",
      booking_date: "2026-03-31",
      booking_time: "15:00",
      assigned_user_name: "Alice",
    },
    {
      id: "b5",
      event_type: "booking",
      event_datetime: at("2026-03-07"),
      contact_email: "eve@x.test",
      booking_date: "2026-03-12",
      cancelled_at: at("2026-03-08"),
      assigned_user_name: "Alice",
    },
    {
      id: "n1",
      event_type: "no_show",
      event_datetime: at("2026-03-03"),
      contact_email: "cat@x.test",
      assigned_user_name: "Bruno",
    },
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-11"),
      contact_email: "ann@x.test",
      amount: 1000,
      product_key: "coaching",
      assigned_user_name: "Alice",
    },
    {
      id: "p1",
      event_type: "payment",
      event_datetime: at("2026-03-20"),
      contact_email: "ann@x.test",
      amount: 500,
      payment_status: "paid",
      product_key: "coaching",
      assigned_user_name: "Alice",
    },
    {
      id: "r1",
      event_type: "payment",
      event_datetime: at("2026-03-25"),
      contact_email: "ann@x.test",
      amount: 200,
      payment_status: "refunded",
      product_key: "coaching",
    },
    {
      id: "s2",
      event_type: "sale",
      event_datetime: at("2026-03-15"),
      contact_email: "bob@x.test",
      amount: 300,
      is_baseline: true,
      assigned_user_name: "Bruno",
    },
    {
      id: "s3",
      event_type: "sale",
      event_datetime: at("2026-02-10"),
      contact_email: "cat@x.test",
      amount: 700,
    },
    {
      id: "s5",
      event_type: "sale",
      event_datetime: at("2026-03-12"),
      contact_email: "cat@x.test",
      amount: 900,
      product_key: "coaching",
      assigned_user_name: "Bruno",
    },
    {
      id: "s4",
      event_type: "sale",
      event_datetime: at("2026-03-18"),
      contact_email: "gus@x.test",
      amount: 400,
      product_key: "ebook",
    },
    {
      id: "d1",
      event_type: "payment",
      event_datetime: at("2026-03-28"),
      contact_email: "gus@x.test",
      amount: 50,
      payment_status: "disputed",
      product_key: "ebook",
    },
    {
      id: "x1",
      event_type: "sale_lost",
      event_datetime: at("2026-03-22"),
      contact_email: "bob@x.test",
      assigned_user_name: "Bruno",
    },
  ],
};

async function marchAccount() {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, march);
  // A rep known to the account (reps table) without any activity in March.
  await env.db.tenant(account.accountId, (tx) =>
    tx.execute(
      sql`insert into reps (account_id, id, name) values (${account.accountId}, 'r-chloe', 'Chloé')`,
    ),
  );
  return account;
}

describe("GET /sales/summary", () => {
  test("every figure of March, worked out by hand", async () => {
    const account = await marchAccount();
    const r = await env.get(await account.key(["read:sales"]), `/sales/summary?${MARCH}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      data: {
        from: "2026-03-01",
        to: "2026-03-31",
        sales: 3, // s1, s5 (cat's coaching is a new product after s3), s4; s2 is baseline, p1 an installment
        revenue: 2800, // s1 1000 + p1 500, s5 900, s4 400
        ticket_moyen: 933.33,
        refund_amount: 200, // r1 joins s1
        dispute_amount: 50, // d1 joins s4
        net_revenue: 2550,
        sales_lost: 1,
        close_rate: 3, // 3 sales / 1 show
        pipeline: {
          leads: 2,
          applications: 2,
          bookings: 4, // b1 b2 b4 b5 by event date
          meetings: 3, // b1 b3 b4 by booking date; b5 cancelled, b2 in April
          meetings_past: 2, // b1, b3
          meetings_upcoming: 1, // b4 is on March 31 at 15:00, after now
          meetings_cancelled: 1, // b5
          shows: 1, // 2 past meetings − 1 no-show
          applications_without_booking: 1, // dan; ann booked (b1) after applying (a1)
        },
        no_shows: 1,
        no_show_rate: 0.5, // 1 / (1 show + 1 no-show)
      },
    });
  });

  test("the same window gives the same numbers as /dashboard/kpis", async () => {
    const account = await marchAccount();
    const key = await account.key(["read:sales", "read:dashboard"]);
    for (const window of [MARCH, "from=2026-03-10&to=2026-03-20", "from=2026-02-01&to=2026-03-15", ""]) {
      const s = (await env.get(key, `/sales/summary?${window}`)).body.data;
      const d = (await env.get(key, `/dashboard/kpis?${window}`)).body.data;
      assert.deepEqual(
        {
          sales: s.sales,
          revenue: s.revenue,
          ticket_moyen: s.ticket_moyen,
          refund_amount: s.refund_amount,
          dispute_amount: s.dispute_amount,
          net_revenue: s.net_revenue,
          close_rate: s.close_rate,
          leads: s.pipeline.leads,
          applications: s.pipeline.applications,
          bookings: s.pipeline.bookings,
          meetings: s.pipeline.meetings,
          shows: s.pipeline.shows,
          no_shows: s.no_shows,
        },
        {
          sales: d.total_sales,
          revenue: d.revenue,
          ticket_moyen: d.ticket_moyen,
          refund_amount: d.refund_amount,
          dispute_amount: d.dispute_amount,
          net_revenue: d.net_revenue,
          close_rate: d.close_rate,
          leads: d.leads,
          applications: d.applications,
          bookings: d.bookings,
          meetings: d.meetings,
          shows: d.shows,
          no_shows: d.no_shows,
        },
        window,
      );
    }
  });

  test("open applications: a contact whose latest application of the window has no booking since", async () => {
    const account = await seedAccount(env.db);
    const app = (id: string, email: string, day: string) => ({
      id,
      event_type: "application",
      event_datetime: at(day),
      contact_email: email,
    });
    const booking = (id: string, email: string, day: string) => ({
      id,
      event_type: "booking",
      event_datetime: at(day),
      contact_email: email,
      booking_date: "2026-03-30",
    });
    await loadFixture(env.db, account.accountId, {
      events: [
        // eve applied, booked, then applied again: open again
        app("e1", "eve@x.test", "2026-03-02"),
        booking("e2", "eve@x.test", "2026-03-03"),
        app("e3", "eve@x.test", "2026-03-10"),
        // fay applied and booked the same instant: not open
        app("f1", "fay@x.test", "2026-03-05"),
        booking("f2", "fay@x.test", "2026-03-05"),
        // gus applied in February, booked nothing: not in March's window
        app("g1", "gus@x.test", "2026-02-20"),
        // hal applied twice in March, never booked: one contact
        app("h1", "hal@x.test", "2026-03-06"),
        app("h2", "hal@x.test", "2026-03-07"),
      ],
    });
    const key = await account.key(["read:sales"]);
    const march = await env.get(key, `/sales/summary?${MARCH}`);
    assert.equal(march.body.data.pipeline.applications_without_booking, 2); // eve, hal
    const february = await env.get(key, "/sales/summary?from=2026-02-01&to=2026-02-28");
    assert.equal(february.body.data.pipeline.applications_without_booking, 1); // gus
  });

  test("no parameters: the default window, zeros and nulls on an empty account", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:sales"]), "/sales/summary");
    assert.equal(r.status, 200);
    assert.equal(r.body.data.from, "2026-03-02");
    assert.equal(r.body.data.sales, 0);
    assert.equal(r.body.data.ticket_moyen, null);
    assert.equal(r.body.data.no_show_rate, null);
    assert.equal(r.body.data.pipeline.meetings_upcoming, 0);
  });
});

describe("GET /sales/reps", () => {
  test("one row per rep, worked out by hand; events without a rep make the null row", async () => {
    const account = await marchAccount();
    const r = await env.get(await account.key(["read:sales"]), `/sales/reps?${MARCH}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      {
        rep_name: "Alice",
        bookings: 3, // b1 b4 b5
        meetings: 2, // b1 b4 (b5 cancelled)
        shows: 1, // b1 is past, no no-show
        no_shows: 0,
        sales: 1, // s1 (p1 is its installment)
        revenue: 1500,
        close_rate: 1,
        no_show_rate: 0,
        ticket_moyen: 1500,
        contacts_met: 1, // ann (b1); fay's b4 is still upcoming
        contacts_closed: 1,
      },
      {
        rep_name: "Bruno",
        bookings: 1, // b2; b3 was booked in February
        meetings: 1, // b3; b2 is in April
        shows: 0, // 1 past meeting − 1 no-show
        no_shows: 1,
        sales: 1, // s5; s2 is baseline
        revenue: 900,
        close_rate: null,
        no_show_rate: 1,
        ticket_moyen: 900,
        contacts_met: 1, // cat (met is a past meeting, the no-show does not remove it)
        contacts_closed: 1,
      },
      {
        rep_name: null, // l1 l2 a2 s4 d1 carry no rep
        bookings: 0,
        meetings: 0,
        shows: 0,
        no_shows: 0,
        sales: 1, // s4
        revenue: 400,
        close_rate: null,
        no_show_rate: null,
        ticket_moyen: 400,
        contacts_met: 0,
        contacts_closed: 1,
      },
      {
        rep_name: "Chloé", // from the reps table only
        bookings: 0,
        meetings: 0,
        shows: 0,
        no_shows: 0,
        sales: 0,
        revenue: 0,
        close_rate: null,
        no_show_rate: null,
        ticket_moyen: null,
        contacts_met: 0,
        contacts_closed: 0,
      },
    ]);
  });

  test("the rows add up to the dashboard totals", async () => {
    const account = await marchAccount();
    const key = await account.key(["read:sales", "read:dashboard"]);
    for (const window of [MARCH, "from=2026-02-01&to=2026-03-15", ""]) {
      const reps = (await env.get(key, `/sales/reps?${window}`)).body.data as Record<string, number>[];
      const d = (await env.get(key, `/dashboard/kpis?${window}`)).body.data;
      const sum = (f: string) => reps.reduce((s, r) => s + (r[f] ?? 0), 0);
      assert.equal(sum("bookings"), d.bookings, window);
      assert.equal(sum("meetings"), d.meetings, window);
      assert.equal(sum("no_shows"), d.no_shows, window);
      assert.equal(sum("sales"), d.total_sales, window);
      assert.equal(Math.round(sum("revenue") * 100) / 100, d.revenue, window);
    }
  });
});

/** Contacts converting in March 2026; the cycle runs from the first lead to the first counted sale. */
const cycles: Fixture = {
  events: [
    // c1: lead Feb 20, sale Mar 3 → 11 days
    { id: "c1l", event_type: "lead", event_datetime: at("2026-02-20"), contact_email: "c1@x.test" },
    { id: "c1a", event_type: "application", event_datetime: at("2026-02-25"), contact_email: "c1@x.test" },
    {
      id: "c1s",
      event_type: "sale",
      event_datetime: at("2026-03-03"),
      contact_email: "c1@x.test",
      amount: 10,
    },
    // c2: first of two leads Mar 1 10:00, sale Mar 5 22:00 → 4.5 days
    { id: "c2l", event_type: "lead", event_datetime: at("2026-03-01"), contact_email: "c2@x.test" },
    { id: "c2m", event_type: "lead", event_datetime: at("2026-03-02"), contact_email: "c2@x.test" },
    {
      id: "c2s",
      event_type: "sale",
      event_datetime: at("2026-03-05", "22:00:00"),
      contact_email: "c2@x.test",
      amount: 10,
    },
    // c3: no lead, its first other event (a booking) Mar 4 → sale Mar 10: 6 days
    { id: "c3b", event_type: "booking", event_datetime: at("2026-03-04"), contact_email: "c3@x.test" },
    {
      id: "c3s",
      event_type: "sale",
      event_datetime: at("2026-03-10"),
      contact_email: "c3@x.test",
      amount: 10,
    },
    // c4: only a sale → a conversion without a measurable cycle
    {
      id: "c4s",
      event_type: "sale",
      event_datetime: at("2026-03-17"),
      contact_email: "c4@x.test",
      amount: 10,
    },
    // c5: first sale in January → not a March conversion, even with a new purchase in March
    { id: "c5l", event_type: "lead", event_datetime: at("2026-01-01"), contact_email: "c5@x.test" },
    {
      id: "c5s",
      event_type: "sale",
      event_datetime: at("2026-01-15"),
      contact_email: "c5@x.test",
      amount: 10,
    },
    {
      id: "c5t",
      event_type: "sale",
      event_datetime: at("2026-03-20"),
      contact_email: "c5@x.test",
      amount: 10,
      product_key: "other",
    },
    // c6: a baseline sale Mar 21 does not count; the counted one Mar 24, lead Mar 20 → 4 days
    { id: "c6l", event_type: "lead", event_datetime: at("2026-03-20"), contact_email: "c6@x.test" },
    {
      id: "c6b",
      event_type: "sale",
      event_datetime: at("2026-03-21"),
      contact_email: "c6@x.test",
      amount: 10,
      is_baseline: true,
    },
    {
      id: "c6s",
      event_type: "sale",
      event_datetime: at("2026-03-24"),
      contact_email: "c6@x.test",
      amount: 10,
      product_key: "x",
    },
  ],
};

describe("GET /sales/cycle", () => {
  test("cycle statistics and weekly trend, worked out by hand", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, cycles);
    const r = await env.get(await account.key(["read:sales"]), `/sales/cycle?${MARCH}`);
    assert.equal(r.status, 200);
    // Measured cycles, sorted: 4, 4.5, 6, 11 (c1 c2 c3 c6); c4 converts without a start.
    assert.deepEqual(r.body.data, {
      from: "2026-03-01",
      to: "2026-03-31",
      avg_days: 6.4, // 25.5 / 4 = 6.375
      median_days: 5.3, // between 4.5 and 6: 5.25
      p25_days: 4.4, // 4 + 0.75 × 0.5 = 4.375
      p75_days: 7.3, // 6 + 0.25 × 5 = 7.25
      sample_size: 4,
      conversions: 5, // c1 c2 c3 c4 c6
      weekly_trend: [
        { week_start: "2026-02-23", conversions: 0, avg_days: null }, // March 1 is a Sunday
        { week_start: "2026-03-02", conversions: 2, avg_days: 7.8 }, // c1 11, c2 4.5 → 7.75
        { week_start: "2026-03-09", conversions: 1, avg_days: 6 },
        { week_start: "2026-03-16", conversions: 1, avg_days: null }, // c4, unmeasured
        { week_start: "2026-03-23", conversions: 1, avg_days: 4 },
        { week_start: "2026-03-30", conversions: 0, avg_days: null },
      ],
    });
  });

  test("no parameters on an empty account: nulls and empty weeks", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:sales"]), "/sales/cycle");
    assert.equal(r.status, 200);
    assert.equal(r.body.data.conversions, 0);
    assert.equal(r.body.data.sample_size, 0);
    assert.equal(r.body.data.median_days, null);
    assert.equal(r.body.data.weekly_trend[0].week_start, "2026-03-02"); // window Mar 2–31, a Monday
    assert.equal(r.body.data.weekly_trend.length, 5);
  });
});

describe("sales routes: parameters", () => {
  test("malformed dates and from after to: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:sales"]);
    for (const path of ["/sales/summary", "/sales/reps", "/sales/cycle"]) {
      assert.deepEqual(await env.get(key, `${path}?from=2026-3-1`), {
        status: 400,
        body: { error: "from: must be a date YYYY-MM-DD" },
      });
      assert.deepEqual(await env.get(key, `${path}?to=2026-02-30`), {
        status: 400,
        body: { error: "to: is not a calendar date" },
      });
      assert.deepEqual(await env.get(key, `${path}?from=2026-03-02&to=2026-03-01`), {
        status: 400,
        body: { error: "from: must not be after to" },
      });
    }
  });
});
