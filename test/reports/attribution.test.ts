import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { sharesOf } from "../../src/attribution/capture-health.ts";
import { rows } from "../../src/db/client.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";
import { ad, click, worked } from "../helpers/worked-example.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

const MARCH = "?from=2026-03-01&to=2026-03-31";

const identity = (id: string) => ({
  out_ad_id: id,
  out_ad_name: `Ad ${id}`,
  out_campaign_id: "C1",
  out_campaign_name: "Spring",
  out_adset_id: "S1",
  out_adset_name: "Set",
  out_platform: "meta",
});
const zeros = {
  out_total_spend: 0,
  out_total_clicks: 0,
  out_total_impressions: 0,
  out_total_reach: 0,
  out_leads: 0,
  out_applications: 0,
  out_bookings: 0,
  out_meetings: 0,
  out_meetings_present: 0,
  out_meetings_no_show: 0,
  out_sales: 0,
  out_revenue: 0,
  out_show_rate: null,
  out_close_rate: null,
  out_rep_names: [],
  out_sales_ft: 0,
  out_revenue_ft: 0,
  out_sales_lt: 0,
  out_revenue_lt: 0,
  out_sales_assisted: 0,
  out_revenue_assisted: 0,
  out_refund_amount: 0,
  out_dispute_amount: 0,
  out_net_revenue: 0,
  out_is_excluded: false,
};

describe("GET /attribution", () => {
  test("the worked example of docs/attribution.md", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, worked);
    const key = await account.key(["read:attribution"]);
    const r = await env.get(key, `/attribution${MARCH}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      {
        ...identity("A"),
        ...zeros,
        out_total_spend: 100,
        out_total_clicks: 10,
        out_total_impressions: 1000,
        out_total_reach: 800,
        // A was Ann's first ad touch: first-touch credit only; results went to B
        out_sales_ft: 1,
        out_revenue_ft: 1500, // the sale 1000 + its installment 500 (gross, before the refund)
      },
      {
        ...identity("B"),
        ...zeros,
        out_total_spend: 50,
        out_total_clicks: 5,
        out_total_impressions: 500,
        out_total_reach: 400,
        // every conversion inherited B (her last ad click) — the later email took no credit
        out_leads: 1,
        out_bookings: 1,
        out_meetings: 1, // booked for March 10
        out_meetings_present: 1, // past, and no no-show
        out_sales: 1,
        out_revenue: 1500,
        out_show_rate: 1,
        out_close_rate: 1,
        out_rep_names: ["Rita"],
        out_sales_lt: 1,
        out_revenue_lt: 1500,
        out_refund_amount: 200,
        out_net_revenue: 1300,
      },
    ]);
  });

  test("assisted: every other distinct ad; the event's own ad is its last touch", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      spend: [ad("A", "2026-03-01", 10), ad("B", "2026-03-01", 10), ad("C", "2026-03-01", 10)],
      touchpoints: [
        click("u1", "bob@x.test", "A", "2026-03-02"),
        click("u2", "bob@x.test", "C", "2026-03-03"),
        click("u3", "bob@x.test", "A", "2026-03-04"),
        // more than 365 days before the sale: out of the look-back
        click("u0", "bob@x.test", "B", "2025-03-01"),
      ],
      events: [
        {
          id: "s1",
          event_type: "sale",
          event_datetime: at("2026-03-10"),
          contact_email: "bob@x.test",
          amount: 400,
          utm_ad_id: "B",
          assigned_user_name: "Zoe",
        },
      ],
    });
    const r = await env.get(await account.key(["read:attribution"]), `/attribution${MARCH}`);
    assert.equal(r.status, 200);
    const byId = Object.fromEntries(r.body.data.map((row: { out_ad_id: string }) => [row.out_ad_id, row]));
    // first touch A (March 2), last touch B (the sale's own utm_ad_id), C assisted; A twice is one ad
    assert.deepEqual(
      ["A", "B", "C"].map((id) => [
        byId[id].out_sales,
        byId[id].out_sales_ft,
        byId[id].out_sales_lt,
        byId[id].out_sales_assisted,
        byId[id].out_revenue_assisted,
      ]),
      [
        [0, 1, 0, 0, 0],
        [1, 0, 1, 0, 0],
        [0, 0, 0, 1, 400],
      ],
    );
    assert.deepEqual(byId.B.out_rep_names, ["Zoe"]);
  });

  test("a later email, bio-link or organic touch never takes ad credit", async () => {
    const account = await seedAccount(env.db);
    const plain = (id: string, day: string, utm: Record<string, string>) => ({
      id,
      email: "cy@x.test",
      session_id: `s-${id}`,
      kind: "web",
      event_type: "page_view",
      occurred_at: at(day),
      ...utm,
    });
    await loadFixture(env.db, account.accountId, {
      spend: [ad("A", "2026-03-01", 10)],
      touchpoints: [
        click("v1", "cy@x.test", "A", "2026-03-02"),
        plain("v2", "2026-03-03", { utm_source: "email", utm_medium: "email", utm_campaign: "news" }),
        plain("v3", "2026-03-04", { utm_source: "instagram", utm_medium: "bio" }),
        plain("v4", "2026-03-05", {}),
      ],
      events: [
        {
          id: "l1",
          event_type: "lead",
          event_datetime: at("2026-03-06"),
          contact_email: "cy@x.test",
          utm_source: "email",
          utm_campaign: "news",
        },
        {
          id: "s1",
          event_type: "sale",
          event_datetime: at("2026-03-07"),
          contact_email: "cy@x.test",
          amount: 90,
        },
      ],
    });
    const r = await env.get(await account.key(["read:attribution"]), `/attribution${MARCH}`);
    assert.equal(r.body.data.length, 1);
    const [row] = r.body.data;
    assert.deepEqual(
      [row.out_ad_id, row.out_leads, row.out_sales, row.out_revenue, row.out_sales_ft, row.out_sales_lt],
      ["A", 1, 1, 90, 1, 1],
    );
  });

  test("property: ft, lt and ad-of-record sales agree; net = revenue − refunds − disputes", async () => {
    const step = fc.oneof(
      fc.record({ t: fc.constant("ad" as const), ad: fc.constantFrom("A", "B", "C") }),
      fc.record({ t: fc.constantFrom("email" as const, "organic" as const) }),
      fc.record({
        t: fc.constantFrom("lead" as const, "sale" as const, "refund" as const),
        own: fc.option(fc.constantFrom("A", "B", "C", "Z"), { nil: null }),
        amount: fc.integer({ min: 1, max: 500 }),
      }),
    );
    const journeys = fc.array(fc.array(step, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(journeys, async (contacts) => {
        const account = await seedAccount(env.db);
        const fixture = {
          spend: [ad("A", "2026-03-01", 10), ad("B", "2026-03-01", 20), ad("C", "2026-03-01", 30)],
          touchpoints: [] as Record<string, unknown>[],
          events: [] as Record<string, unknown>[],
        };
        // sales with an ad touch at or before them, worked out from the journey itself
        const touched = new Set<string>();
        contacts.forEach((steps, c) => {
          const email = `c${c}@x.test`;
          let adSeen = false;
          steps.forEach((s, i) => {
            const id = `c${c}-${i}`;
            const when = at(`2026-03-${String(2 + i * 4).padStart(2, "0")}`, `1${c}:00:00`);
            if (s.t === "ad") {
              fixture.touchpoints.push(click(id, email, s.ad, when.slice(0, 10), when.slice(11, 19)));
              adSeen = true;
            } else if (s.t === "email" || s.t === "organic") {
              fixture.touchpoints.push({
                id,
                email,
                kind: "web",
                event_type: "page_view",
                occurred_at: when,
                ...(s.t === "email" ? { utm_source: "email", utm_medium: "email" } : {}),
              });
            } else if ("own" in s) {
              const ownKnown = s.own !== null && s.own !== "Z";
              if (ownKnown) adSeen = true;
              if (s.t === "sale" && adSeen) touched.add(id);
              fixture.events.push({
                id,
                event_type: s.t === "lead" ? "lead" : s.t === "sale" ? "sale" : "payment",
                event_datetime: when,
                contact_email: email,
                amount: s.amount,
                product_key: "p",
                ...(s.t === "refund" ? { payment_status: "refunded" } : {}),
                ...(s.own ? { utm_ad_id: s.own } : {}),
              });
            }
          });
        });
        await loadFixture(env.db, account.accountId, fixture as Fixture);
        const counted = await env.db.tenant(account.accountId, (tx) =>
          rows<{ id: string }>(tx, sql`select id from events where counted`),
        );
        const expected = counted.filter((e) => touched.has(e.id)).length;
        const r = await env.get(await account.key(["read:attribution"]), `/attribution${MARCH}`);
        assert.equal(r.status, 200);
        const data = r.body.data as Record<string, number>[];
        const sum = (f: string) => data.reduce((a, row) => a + (row[f] ?? 0), 0);
        assert.equal(sum("out_sales_ft"), expected);
        assert.equal(sum("out_sales_lt"), expected);
        assert.equal(sum("out_sales"), expected);
        assert.equal(sum("out_revenue_ft"), sum("out_revenue_lt"));
        const cents = (x: number) => Math.round(x * 100);
        assert.equal(
          cents(sum("out_net_revenue")),
          cents(sum("out_revenue")) - cents(sum("out_refund_amount")) - cents(sum("out_dispute_amount")),
        );
      }),
      { numRuns: 15 },
    );
  });

  test("an empty account: no rows; malformed dates: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:attribution"]);
    assert.deepEqual(await env.get(key, "/attribution"), { status: 200, body: { data: [] } });
    assert.deepEqual(await env.get(key, "/attribution?to=2026-02-30"), {
      status: 400,
      body: { error: "to: is not a calendar date" },
    });
    assert.deepEqual(await env.get(key, "/attribution/report?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});

describe("GET /attribution/report", () => {
  test("sales without an ad of record sit in a row per source and campaign", async () => {
    const account = await seedAccount(env.db);
    const sale = (id: string, email: string, amount: number, utm: Record<string, string>) => ({
      id,
      event_type: "sale",
      event_datetime: at("2026-03-10"),
      contact_email: email,
      amount,
      ...utm,
    });
    await loadFixture(env.db, account.accountId, {
      events: [
        sale("s1", "ann@x.test", 300, { utm_source: " instagram ", utm_campaign: "bio" }),
        sale("s2", "bob@x.test", 200, { utm_source: "instagram", utm_campaign: "bio" }),
        sale("s3", "cy@x.test", 50, { utm_campaign: "  " }),
      ],
    });
    const r = await env.get(await account.key(["read:attribution"]), `/attribution/report${MARCH}`);
    const row = (source: string, campaign: string | null, revenue: number, touchpoints: number) => ({
      out_source: source,
      out_campaign: campaign,
      out_ad_id: null,
      out_ad_name: null,
      out_spend: 0,
      out_gross_revenue: revenue,
      out_refund_amount: 0,
      out_dispute_amount: 0,
      out_net_revenue: revenue,
      out_roi_gross: null,
      out_roi_net: null,
      out_touchpoints: touchpoints,
    });
    // Each sale is also a conversion touchpoint, counted under its own source and campaign.
    assert.deepEqual(r.body.data, [row("instagram", "bio", 500, 2), row("(none)", null, 50, 1)]);
  });

  test("the worked example, per source, campaign and ad", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, worked);
    const r = await env.get(await account.key(["read:attribution"]), `/attribution/report${MARCH}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      {
        out_source: "facebook",
        out_campaign: "Spring",
        out_ad_id: "A",
        out_ad_name: "Ad A",
        out_spend: 100,
        out_gross_revenue: 0,
        out_refund_amount: 0,
        out_dispute_amount: 0,
        out_net_revenue: 0,
        out_roi_gross: -1,
        out_roi_net: -1,
        out_touchpoints: 1, // t1
      },
      {
        out_source: "facebook", // its web click t2; the conversions' enriched source is the email's
        out_campaign: "Spring",
        out_ad_id: "B",
        out_ad_name: "Ad B",
        out_spend: 50,
        out_gross_revenue: 1500,
        out_refund_amount: 200,
        out_dispute_amount: 0,
        out_net_revenue: 1300,
        out_roi_gross: 29, // (1500 − 50) / 50
        out_roi_net: 25, // (1300 − 50) / 50
        out_touchpoints: 6, // t2 and the conversion touchpoints of l1 b1 s1 p1 r1
      },
      {
        out_source: "email",
        out_campaign: "newsletter",
        out_ad_id: null,
        out_ad_name: null,
        out_spend: 0,
        out_gross_revenue: 0,
        out_refund_amount: 0,
        out_dispute_amount: 0,
        out_net_revenue: 0,
        out_roi_gross: null,
        out_roi_net: null,
        out_touchpoints: 1, // t3
      },
    ]);
  });
});

describe("GET /attribution/health", () => {
  test("shares, pixel and issues, worked out by hand", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      spend: [ad("X", "2026-03-01", 10)],
      touchpoints: [
        { ...click("w1", null, "X", "2026-03-30"), session_id: "s1" },
        {
          id: "w2",
          visitor_id: "v1",
          session_id: "s1",
          kind: "web",
          event_type: "page_view",
          occurred_at: at("2026-03-30", "11:00:00"),
        },
        {
          id: "w3",
          visitor_id: "v2",
          session_id: "s2",
          kind: "web",
          event_type: "page_view",
          occurred_at: at("2026-03-29"),
        },
      ],
      events: [
        {
          id: "e1",
          event_type: "lead",
          event_datetime: at("2026-03-20"),
          contact_email: "a@x.test",
          utm_ad_id: "X",
        },
        {
          id: "e2",
          event_type: "lead",
          event_datetime: at("2026-03-20"),
          contact_email: "b@x.test",
          utm_content: " ad x ",
        },
        {
          id: "e3",
          event_type: "lead",
          event_datetime: at("2026-03-20"),
          contact_email: "c@x.test",
          utm_content: "{{ad.name}}",
        },
        { id: "e4", event_type: "lead", event_datetime: at("2026-03-20"), contact_email: "d@x.test" },
        {
          id: "e5",
          event_type: "lead",
          event_datetime: at("2026-03-20"),
          contact_email: "e@x.test",
          utm_content: "Old ad",
        },
        // before the 30 days (March 2 – 31): not counted
        { id: "e6", event_type: "lead", event_datetime: at("2026-02-20"), contact_email: "f@x.test" },
      ],
    });
    const r = await env.get(await account.key(["read:attribution"]), "/attribution/health");
    assert.equal(r.status, 200);
    const { issues, ...rest } = r.body.data;
    assert.deepEqual(rest, {
      verdict: "broken", // 2 of the 4 ad-signal events unresolved: 50 %
      events_pub_30j: 4, // e1 e2 e3 e5; e4 carries nothing
      pct_exact_id: 25,
      pct_par_nom: 25,
      pct_non_resolu: 50,
      pixel_sessions_30j: 2, // s1 (w1 w2), s2 (w3)
      pixel_derniere_activite: "2026-03-30T11:00:00.000Z",
      pixel_pct_avec_id: 50, // s1 carries X's id
    });
    assert.deepEqual(
      issues.map((i: { code: string; count: number }) => [i.code, i.count]),
      [
        ["unresolved_macros", 1],
        ["unresolved_ads", 1],
        ["leads_without_utm", 1],
      ],
    );
    assert.match(issues[0].message, /\{\{ad\.name\}\}.*ad level/);
    assert.match(issues[1].message, /"Old ad"/);
  });

  test("no data; a silent pixel is broken", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:attribution"]);
    assert.deepEqual((await env.get(key, "/attribution/health")).body.data, {
      verdict: "no_data",
      events_pub_30j: 0,
      pct_exact_id: 0,
      pct_par_nom: 0,
      pct_non_resolu: 0,
      pixel_sessions_30j: 0,
      pixel_derniere_activite: null,
      pixel_pct_avec_id: null,
      issues: [],
    });
    await loadFixture(env.db, account.accountId, {
      spend: [ad("X", "2026-03-01", 10)],
      events: [
        {
          id: "e1",
          event_type: "lead",
          event_datetime: at("2026-03-30"),
          contact_email: "a@x.test",
          utm_ad_id: "X",
        },
      ],
    });
    const r = (await env.get(key, "/attribution/health")).body.data;
    assert.equal(r.verdict, "broken");
    assert.deepEqual(
      r.issues.map((i: { code: string; count: number }) => [i.code, i.count]),
      [["pixel_silent", 1]],
    );
    // A page view within the 7 days: the pixel is not silent.
    await loadFixture(env.db, account.accountId, {
      touchpoints: [
        { id: "p1", session_id: "s-p1", kind: "web", event_type: "page_view", occurred_at: at("2026-03-29") },
      ],
    });
    const after = (await env.get(key, "/attribution/health")).body.data;
    assert.deepEqual(
      after.issues.map((i: { code: string }) => i.code),
      [],
    );
  });

  test("shares add up to exactly 100 in tenths", () => {
    assert.deepEqual(sharesOf([1, 1, 1]), [33.4, 33.3, 33.3]);
    assert.deepEqual(sharesOf([2, 1, 0]), [66.7, 33.3, 0]);
    assert.deepEqual(sharesOf([0, 0, 0]), [0, 0, 0]);
  });
});
