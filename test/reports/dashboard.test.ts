import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

/** March 2026 in a UTC account; figures below are worked out by hand from these records. */
const march: Fixture = {
  spend: [
    {
      platform: "meta",
      ad_id: "A1",
      ad_name: "Ad One",
      campaign_id: "C1",
      campaign_name: "Camp",
      date: "2026-03-05",
      total_spend: 100,
    },
    {
      platform: "meta",
      ad_id: "A1",
      ad_name: "Ad One",
      campaign_id: "C1",
      campaign_name: "Camp",
      date: "2026-03-06",
      total_spend: 50,
    },
    { platform: "google", ad_id: "A2", ad_name: "Ad Two", date: "2026-02-20", total_spend: 999 },
    { platform: "google", ad_id: "A2", ad_name: "Ad Two", date: "2026-03-10", total_spend: 30 },
  ],
  events: [
    {
      id: "l1",
      event_type: "lead",
      event_datetime: at("2026-03-02"),
      contact_email: "ann@x.test",
      utm_ad_id: "A1",
    },
    { id: "l2", event_type: "lead", event_datetime: at("2026-03-03"), contact_email: "bob@x.test" },
    { id: "l3", event_type: "lead", event_datetime: at("2026-02-27"), contact_email: "cat@x.test" },
    {
      id: "a1",
      event_type: "application",
      event_subtype: "qualified",
      event_datetime: at("2026-03-04"),
      contact_email: "ann@x.test",
    },
    {
      id: "b1",
      event_type: "booking",
      event_datetime: at("2026-03-05"),
      contact_email: "ann@x.test",
      booking_date: "2026-03-10",
      booking_time: "10:00",
    },
    {
      id: "b2",
      event_type: "booking",
      event_datetime: at("2026-03-06"),
      contact_email: "bob@x.test",
      booking_date: "2026-04-02",
    },
    {
      id: "b3",
      event_type: "booking",
      event_datetime: at("2026-02-25"),
      contact_email: "cat@x.test",
      booking_date: "2026-03-03",
    },
    {
      id: "b4",
      event_type: "booking",
      event_datetime: at("2026-03-20"),
      contact_email: "dan@x.test",
      booking_date: "2026-03-31",
      booking_time: "15:00",
    },
    {
      id: "b5",
      event_type: "booking",
      event_datetime: at("2026-03-07"),
      contact_email: "eve@x.test",
      booking_date: "2026-03-12",
      cancelled_at: at("2026-03-08"),
    },
    { id: "n1", event_type: "no_show", event_datetime: at("2026-03-03"), contact_email: "cat@x.test" },
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-11"),
      contact_email: "ann@x.test",
      amount: 1000,
      product_key: "coaching",
    },
    {
      id: "p1",
      event_type: "payment",
      event_datetime: at("2026-03-20"),
      contact_email: "ann@x.test",
      amount: 500,
      payment_status: "paid",
      product_key: "coaching",
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
    },
    {
      id: "s3",
      event_type: "sale",
      event_datetime: at("2026-02-10"),
      contact_email: "cat@x.test",
      amount: 700,
    },
  ],
};

describe("GET /dashboard/kpis", () => {
  test("every KPI of March, worked out by hand", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, march);
    const key = await account.key(["read:dashboard"]);
    const r = await env.get(key, "/dashboard/kpis?from=2026-03-01&to=2026-03-31");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      data: {
        from: "2026-03-01",
        to: "2026-03-31",
        leads: 2,
        applications: 1,
        bookings: 4, // b1 b2 b4 b5 by event date; b3 was booked in February
        meetings: 3, // b1 b3 b4 by booking date; b5 was cancelled, b2 is in April
        shows: 1, // b1 and b3 are past, minus the no-show n1
        no_shows: 1,
        total_sales: 1, // s1; p1 is its installment, r1 its refund, s2 a baseline purchase
        revenue: 1500,
        ticket_moyen: 1500,
        refund_amount: 200,
        dispute_amount: 0,
        net_revenue: 1300,
        spend: 180,
        spend_per_lead: 90,
        spend_per_sale: 180,
        roas: 8.3333,
        show_rate: 0.5,
        close_rate: 1,
      },
    });
  });

  test("an empty account: zeros, and null wherever the divisor is zero", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:dashboard"]), "/dashboard/kpis");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, {
      from: "2026-03-02",
      to: "2026-03-31",
      leads: 0,
      applications: 0,
      bookings: 0,
      meetings: 0,
      shows: 0,
      no_shows: 0,
      total_sales: 0,
      revenue: 0,
      ticket_moyen: null,
      refund_amount: 0,
      dispute_amount: 0,
      net_revenue: 0,
      spend: 0,
      spend_per_lead: null,
      spend_per_sale: null,
      roas: null,
      show_rate: null,
      close_rate: null,
    });
  });

  test("malformed dates and from after to: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:dashboard"]);
    assert.deepEqual(await env.get(key, "/dashboard/kpis?from=2026-3-1"), {
      status: 400,
      body: { error: "from: must be a date YYYY-MM-DD" },
    });
    assert.deepEqual(await env.get(key, "/dashboard/kpis?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});

describe("GET /dashboard/daily", () => {
  test("one row per day, days without activity included, by hand", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, march);
    const r = await env.get(
      await account.key(["read:dashboard"]),
      "/dashboard/daily?from=2026-03-01&to=2026-03-05",
    );
    assert.equal(r.status, 200);
    const zero = {
      leads: 0,
      applications: 0,
      bookings: 0,
      meetings: 0,
      no_shows: 0,
      sales: 0,
      revenue: 0,
      spend: 0,
    };
    assert.deepEqual(r.body.data, [
      { report_date: "2026-03-01", ...zero },
      { report_date: "2026-03-02", ...zero, leads: 1 },
      // b3 was booked in February for 3 March: a meeting of the 3rd.
      { report_date: "2026-03-03", ...zero, leads: 1, meetings: 1, no_shows: 1 },
      { report_date: "2026-03-04", ...zero, applications: 1 },
      { report_date: "2026-03-05", ...zero, bookings: 1, spend: 100 },
    ]);
  });

  test("days are the account's: 23:30 UTC on 1 March is 2 March in Paris", async () => {
    const account = await seedAccount(env.db, { timezone: "Europe/Paris" });
    await loadFixture(env.db, account.accountId, {
      events: [
        { id: "late", event_type: "lead", event_datetime: "2026-03-01T23:30:00Z", contact_email: "z@x.test" },
        {
          id: "early",
          event_type: "lead",
          event_datetime: "2026-03-01T22:30:00Z",
          contact_email: "y@x.test",
        },
      ],
    });
    const r = await env.get(
      await account.key(["read:dashboard"]),
      "/dashboard/daily?from=2026-03-01&to=2026-03-02",
    );
    assert.deepEqual(
      r.body.data.map((d: { report_date: string; leads: number }) => [d.report_date, d.leads]),
      [
        ["2026-03-01", 1],
        ["2026-03-02", 1],
      ],
    );
  });
});

describe("GET /dashboard/breakdowns", () => {
  const repsAndProducts: Fixture = {
    events: [
      {
        id: "x1",
        event_type: "lead",
        event_datetime: at("2026-03-02"),
        contact_email: "c1@x.test",
        assigned_user_name: "Zoe",
        utm_source: "facebook",
      },
      {
        id: "x2",
        event_type: "lead",
        event_datetime: at("2026-03-03"),
        contact_email: "c2@x.test",
        assigned_user_name: "Zoe",
        utm_source: "google",
      },
      {
        id: "x3",
        event_type: "booking",
        event_datetime: at("2026-03-04"),
        contact_email: "c3@x.test",
        assigned_user_name: "Yan",
        booking_date: "2026-03-10",
      },
      {
        id: "x4",
        event_type: "sale",
        event_datetime: at("2026-03-12"),
        contact_email: "c4@x.test",
        assigned_user_name: "Yan",
        amount: 400,
        product_name: "Coaching",
      },
      {
        id: "x5",
        event_type: "sale",
        event_datetime: at("2026-03-13"),
        contact_email: "c5@x.test",
        assigned_user_name: "Zoe",
        amount: 100,
        product_key: "ebook",
      },
    ],
  };
  const row = (dimension_key: string | null, figures: Partial<Record<string, number>>) => ({
    dimension_key,
    leads: 0,
    applications: 0,
    bookings: 0,
    shows: 0,
    no_shows: 0,
    sales: 0,
    revenue: 0,
    ...figures,
  });

  test("by source (the default), rep and product, by hand; no value is the null row", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, repsAndProducts);
    const key = await account.key(["read:dashboard"]);
    const window = "from=2026-03-01&to=2026-03-31";
    assert.deepEqual((await env.get(key, `/dashboard/breakdowns?${window}`)).body.data, [
      row(null, { bookings: 1, shows: 1, sales: 2, revenue: 500 }),
      row("facebook", { leads: 1 }),
      row("google", { leads: 1 }),
    ]);
    assert.deepEqual((await env.get(key, `/dashboard/breakdowns?${window}&dim=rep`)).body.data, [
      row("Yan", { bookings: 1, shows: 1, sales: 1, revenue: 400 }),
      row("Zoe", { leads: 2, sales: 1, revenue: 100 }),
    ]);
    assert.deepEqual((await env.get(key, `/dashboard/breakdowns?${window}&dim=product`)).body.data, [
      row("Coaching", { sales: 1, revenue: 400 }),
      row("ebook", { sales: 1, revenue: 100 }),
      row(null, { leads: 2, bookings: 1, shows: 1 }),
    ]);
  });

  test("by campaign: the campaign of each event's ad of record", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, march);
    const r = await env.get(
      await account.key(["read:dashboard"]),
      "/dashboard/breakdowns?from=2026-03-01&to=2026-03-31&dim=campaign",
    );
    assert.deepEqual(r.body.data, [
      // l1 carried ad A1 (campaign Camp); Ann's later a1, b1 and s1 have no ad of their own, so
      // their ad of record is her last ad touch, l1's: Camp. b1 is a past meeting.
      row("Camp", { leads: 1, applications: 1, bookings: 1, shows: 1, sales: 1, revenue: 1500 }),
      // Bob, Cat, Dan and Eve never touched an ad: l2; b2 b4 b5; b3 is past but Cat no-showed.
      row(null, { leads: 1, bookings: 3, no_shows: 1 }),
    ]);
  });

  test("any other dim → 400 listing the values", async () => {
    const account = await seedAccount(env.db);
    const r = await env.get(await account.key(["read:dashboard"]), "/dashboard/breakdowns?dim=country");
    assert.deepEqual(r, {
      status: 400,
      body: { error: "dim: must be one of source, campaign, product, rep" },
    });
  });
});
