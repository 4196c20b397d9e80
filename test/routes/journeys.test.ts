import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

/** A Meta ad id above 2^53: it must come back as this exact string, never as a number. */
const FB_AD = "120208765432109876";
const FB_ADSET = "120208765432100001";
const FB_CAMPAIGN = "120208765432100000";

/**
 * March 2026 in a UTC account: seven contacts with activity, one anonymous visitor, and ivy, known
 * only from a purchase (no event, no touchpoint: no journey). Each CRM event is also a conversion
 * touchpoint of its contact (same instant and type, the event's own UTMs and ad ids, no click ids);
 * every event of ann carries its own UTMs, so none inherits a web touch's.
 *
 * Last activity, newest first:
 *   eve      Mar 30  lead Mar 14, booking Mar 30
 *   dan      Mar 25  lead
 *   bob      Mar 21  page views Mar 20 and 21, no CRM event
 *   cat      Mar 15  lead Feb 20, page view Mar 15
 *   ann      Mar 12  the funnel below
 *   gus      Mar 8   lead 10:00, baseline sale 12:00 (a customer from before tracking: not counted)
 *   hal_50%  Mar 1   lead (its email holds the LIKE wildcards `_` and `%`)
 *   (anonymous visitor v-anon: a page view on Mar 18)
 *
 * ann: page view from a Facebook ad (Mar 2, ad ids and fbclid), video play from Google search
 * (Mar 3, gclid), lead (Mar 4, the Facebook ad), imported form submit (Mar 5, ttclid, 49.90 EUR),
 * booking (Mar 6), sale 1500 (Mar 10), an installment of it 250.50 (Mar 11, same product within
 * 30 days: joins the sale's revenue), direct page view (Mar 12, no UTM).
 */
const march: Fixture = {
  touchpoints: [
    {
      id: "w-ann-fb",
      email: "ann@x.test",
      visitor_id: "v-ann",
      session_id: "s-ann-1",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-02", "09:00:00"),
      url: "https://x.test/offer",
      referrer: "https://facebook.com/",
      utm_source: "facebook",
      utm_medium: "paid_social",
      utm_campaign: "spring_sale",
      utm_content: "ad_one",
      campaign_name: "Spring Sale",
      adset_name: "Lookalike 1%",
      ad_name: "Ad One",
      ad_id: FB_AD,
      adset_id: FB_ADSET,
      campaign_id: FB_CAMPAIGN,
      fbclid: "IwAR-fb-1",
    },
    {
      id: "w-ann-google",
      email: "ann@x.test",
      visitor_id: "v-ann",
      session_id: "s-ann-2",
      kind: "web",
      event_type: "video_play",
      occurred_at: at("2026-03-03", "09:00:00"),
      url: "https://x.test/video",
      utm_source: "google",
      utm_medium: "cpc",
      utm_campaign: "brand",
      utm_term: "coaching program",
      channel: "paid_search",
      gclid: "Cj0-g-2",
    },
    {
      id: "c-ann-form",
      email: "ann@x.test",
      kind: "conversion",
      event_type: "form_submit",
      occurred_at: at("2026-03-05", "11:00:00"),
      utm_source: "tiktok",
      utm_medium: "paid_social",
      utm_campaign: "march_news",
      ttclid: "TT-5",
      value: 49.9,
      currency: "EUR",
      product: "ebook",
    },
    {
      id: "w-ann-direct",
      email: "ann@x.test",
      visitor_id: "v-ann",
      session_id: "s-ann-3",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-12", "09:00:00"),
      url: "https://x.test/thanks",
    },
    {
      id: "w-cat",
      email: "cat@x.test",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-15", "08:00:00"),
      utm_source: "newsletter",
      utm_medium: "email",
    },
    {
      id: "w-anon",
      visitor_id: "v-anon",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-18"),
      utm_source: "reddit",
    },
    {
      id: "w-bob-1",
      email: "bob@x.test",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-20"),
      utm_source: "bing",
      utm_medium: "organic",
    },
    {
      id: "w-bob-2",
      email: "bob@x.test",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-21"),
      utm_source: "bing",
      utm_medium: "organic",
      utm_campaign: "second_visit",
    },
  ],
  events: [
    {
      id: "ann-lead",
      event_type: "lead",
      event_datetime: at("2026-03-04"),
      contact_email: "ann@x.test",
      contact_name: "Ann Smith",
      contact_phone: "+33 6 00 00 00 01",
      utm_source: "facebook",
      utm_medium: "paid_social",
      utm_ad_id: FB_AD,
    },
    {
      id: "ann-booking",
      event_type: "booking",
      event_datetime: at("2026-03-06"),
      contact_email: "ann@x.test",
      booking_date: "2026-03-09",
      utm_source: "email",
      utm_medium: "newsletter",
      utm_campaign: "reminder",
    },
    {
      id: "ann-sale",
      event_type: "sale",
      event_datetime: at("2026-03-10"),
      contact_email: "ann@x.test",
      amount: 1500,
      value: 1800,
      currency: "EUR",
      product_key: "coaching",
      utm_campaign: "closing",
    },
    {
      id: "ann-installment",
      event_type: "payment",
      event_datetime: at("2026-03-11"),
      contact_email: "ann@x.test",
      amount: 250.5,
      payment_status: "paid",
      product_key: "coaching",
      utm_campaign: "installments",
    },
    { id: "cat-lead", event_type: "lead", event_datetime: at("2026-02-20"), contact_email: "cat@x.test" },
    { id: "hal-lead", event_type: "lead", event_datetime: at("2026-03-01"), contact_email: "hal_50%@x.test" },
    {
      id: "gus-lead",
      event_type: "lead",
      event_datetime: at("2026-03-08"),
      contact_email: "gus.100pct@x.test",
    },
    {
      id: "gus-baseline",
      event_type: "sale",
      event_datetime: at("2026-03-08", "12:00:00"),
      contact_email: "gus.100pct@x.test",
      amount: 900,
      is_baseline: true,
    },
    { id: "eve-lead", event_type: "lead", event_datetime: at("2026-03-14"), contact_email: "eve@x.test" },
    {
      id: "eve-booking",
      event_type: "booking",
      event_datetime: at("2026-03-30"),
      contact_email: "eve@x.test",
    },
    { id: "dan-lead", event_type: "lead", event_datetime: at("2026-03-25"), contact_email: "dan@x.test" },
  ],
  purchases: [{ id: "ivy-p1", purchase_date: at("2026-03-20"), contact_email: "ivy@x.test", amount: 99 }],
};

/** The journeys of `march`, most recently active first. */
const JOURNEY_ORDER = [
  "eve@x.test",
  "dan@x.test",
  "bob@x.test",
  "cat@x.test",
  "ann@x.test",
  "gus.100pct@x.test",
  "hal_50%@x.test",
];

/** Every touchpoint of `march`, newest first, as `label` writes them. */
const FEED = [
  "2026-03-30T10:00 eve@x.test conversion booking",
  "2026-03-25T10:00 dan@x.test conversion lead",
  "2026-03-21T10:00 bob@x.test web page_view",
  "2026-03-20T10:00 bob@x.test web page_view",
  "2026-03-18T10:00 v-anon web page_view",
  "2026-03-15T08:00 cat@x.test web page_view",
  "2026-03-14T10:00 eve@x.test conversion lead",
  "2026-03-12T09:00 ann@x.test web page_view",
  "2026-03-11T10:00 ann@x.test conversion payment",
  "2026-03-10T10:00 ann@x.test conversion sale",
  "2026-03-08T12:00 gus.100pct@x.test conversion sale",
  "2026-03-08T10:00 gus.100pct@x.test conversion lead",
  "2026-03-06T10:00 ann@x.test conversion booking",
  "2026-03-05T11:00 ann@x.test conversion form_submit",
  "2026-03-04T10:00 ann@x.test conversion lead",
  "2026-03-03T09:00 ann@x.test web video_play",
  "2026-03-02T09:00 ann@x.test web page_view",
  "2026-03-01T10:00 hal_50%@x.test conversion lead",
  "2026-02-20T10:00 cat@x.test conversion lead",
];

interface Point {
  occurred_at: string;
  kind: string;
  event_type: string;
  contact_email: string | null;
  visitor_id: string | null;
}

/** A touchpoint in one line: minute, contact (else visitor), kind and type. */
const label = (t: Point) =>
  `${t.occurred_at.slice(0, 16)} ${t.contact_email ?? t.visitor_id} ${t.kind} ${t.event_type}`;
const labels = (points: Point[]) => points.map(label);
const emails = (journeys: { contact: { email: string } }[]) => journeys.map((j) => j.contact.email);

type UtmField =
  | "source"
  | "medium"
  | "campaign"
  | "content"
  | "term"
  | "campaign_name"
  | "adset_name"
  | "ad_name"
  | "channel"
  | "type"
  | "sequence"
  | "step";

/** The spec's UTM object: all twelve fields, null unless given. */
const utm = (fields: Partial<Record<UtmField, string>> = {}) => ({
  source: null,
  medium: null,
  campaign: null,
  content: null,
  term: null,
  campaign_name: null,
  adset_name: null,
  ad_name: null,
  channel: null,
  type: null,
  sequence: null,
  step: null,
  ...fields,
});

/** The four ad ids, null unless given. */
const adIds = (ids: Partial<Record<"ad_id" | "adset_id" | "campaign_id" | "meta_ad_id", string>> = {}) => ({
  ad_id: null,
  adset_id: null,
  campaign_id: null,
  meta_ad_id: null,
  ...ids,
});

async function marchAccount() {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, march);
  return { account, key: await account.key(["read:journeys"]) };
}

/** Walks `path` page by page (`limit`) until a short page; returns what each page gave. */
async function walk(key: string, path: string, list: "journeys" | "touchpoints", limit: number) {
  const pages: unknown[][] = [];
  for (let offset = 0; offset <= 100; offset += limit) {
    const r = await env.get(key, `${path}${path.includes("?") ? "&" : "?"}limit=${limit}&offset=${offset}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data.paging, { limit, offset, returned: r.body.data[list].length });
    pages.push(r.body.data[list]);
    if (r.body.data[list].length < limit) break;
  }
  return pages;
}

describe("GET /journeys", () => {
  test("the object, coverage, paging, and ann's whole journey item", async () => {
    const { key } = await marchAccount();
    const r = await env.get(key, "/journeys");
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ["data"]);
    const body = r.body.data;
    assert.deepEqual(Object.keys(body).sort(), ["coverage", "journeys", "paging"]);
    // ann's Facebook page view on Mar 2 is the first web touchpoint (cat's Feb 20 lead is a conversion).
    assert.deepEqual(body.coverage, { web_touchpoints_since: "2026-03-02" });
    assert.deepEqual(body.paging, { limit: 50, offset: 0, returned: 7 });
    const ann = body.journeys[4];
    assert.deepEqual(ann, {
      // The import gives one name field: it is split at its first space.
      contact: { email: "ann@x.test", phone: "+33600000001", first_name: "Ann", last_name: "Smith" },
      first_seen_at: "2026-03-02T09:00:00.000Z",
      last_seen_at: "2026-03-12T09:00:00.000Z",
      first_touch: {
        occurred_at: "2026-03-02T09:00:00.000Z",
        event_type: "page_view",
        is_paid: true,
        platform: null,
        utm: utm({
          source: "facebook",
          medium: "paid_social",
          campaign: "spring_sale",
          content: "ad_one",
          campaign_name: "Spring Sale",
          adset_name: "Lookalike 1%",
          ad_name: "Ad One",
        }),
        ad_ids: adIds({ ad_id: FB_AD, adset_id: FB_ADSET, campaign_id: FB_CAMPAIGN }),
      },
      last_touch: {
        occurred_at: "2026-03-12T09:00:00.000Z",
        event_type: "page_view",
        is_paid: false,
        platform: null,
        utm: utm(),
        ad_ids: adIds(),
      },
      // Web: the two page views and the video play; conversion: lead, form submit, booking, sale, payment.
      touchpoint_counts: { web: 3, conversion: 5, total: 8 },
      // Revenue: the sale's amount (1500, not its value 1800) plus its installment 250.50.
      milestones: {
        first_lead_at: "2026-03-04T10:00:00.000Z",
        first_booking_at: "2026-03-06T10:00:00.000Z",
        first_sale_at: "2026-03-10T10:00:00.000Z",
        revenue: 1750.5,
      },
      event_types_seen: ["booking", "form_submit", "lead", "page_view", "payment", "sale", "video_play"],
    });
    assert.equal(typeof ann.first_touch.ad_ids.ad_id, "string");
  });

  test("a contact without CRM events, and one whose only sale does not count", async () => {
    const { key } = await marchAccount();
    const journeys = (await env.get(key, "/journeys")).body.data.journeys;
    assert.deepEqual(journeys[2], {
      contact: { email: "bob@x.test", phone: null, first_name: null, last_name: null },
      first_seen_at: "2026-03-20T10:00:00.000Z",
      last_seen_at: "2026-03-21T10:00:00.000Z",
      first_touch: {
        occurred_at: "2026-03-20T10:00:00.000Z",
        event_type: "page_view",
        is_paid: false,
        platform: null,
        utm: utm({ source: "bing", medium: "organic" }),
        ad_ids: adIds(),
      },
      last_touch: {
        occurred_at: "2026-03-21T10:00:00.000Z",
        event_type: "page_view",
        is_paid: false,
        platform: null,
        utm: utm({ source: "bing", medium: "organic", campaign: "second_visit" }),
        ad_ids: adIds(),
      },
      touchpoint_counts: { web: 2, conversion: 0, total: 2 },
      milestones: { first_lead_at: null, first_booking_at: null, first_sale_at: null, revenue: 0 },
      event_types_seen: ["page_view"],
    });
    const gus = journeys[5];
    assert.equal(gus.contact.email, "gus.100pct@x.test");
    assert.deepEqual(gus.touchpoint_counts, { web: 0, conversion: 2, total: 2 });
    // The baseline sale is seen, but it is no sale milestone and brings no revenue.
    assert.deepEqual(gus.milestones, {
      first_lead_at: "2026-03-08T10:00:00.000Z",
      first_booking_at: null,
      first_sale_at: null,
      revenue: 0,
    });
    assert.deepEqual(gus.event_types_seen, ["lead", "sale"]);
    assert.deepEqual(
      [gus.first_touch.event_type, gus.first_touch.occurred_at, gus.last_touch.event_type],
      ["lead", "2026-03-08T10:00:00.000Z", "sale"],
    );
    assert.deepEqual(
      [gus.first_seen_at, gus.last_seen_at],
      ["2026-03-08T10:00:00.000Z", "2026-03-08T12:00:00.000Z"],
    );
  });

  test("most recently active first; a purchase alone makes no journey", async () => {
    const { key } = await marchAccount();
    const journeys = (await env.get(key, "/journeys")).body.data.journeys;
    assert.deepEqual(emails(journeys), JOURNEY_ORDER); // no ivy@x.test
    assert.deepEqual(
      journeys.map((j: { last_seen_at: string }) => j.last_seen_at.slice(0, 16)),
      [
        "2026-03-30T10:00",
        "2026-03-25T10:00",
        "2026-03-21T10:00",
        "2026-03-15T08:00",
        "2026-03-12T09:00",
        "2026-03-08T12:00",
        "2026-03-01T10:00",
      ],
    );
    assert.deepEqual(journeys[3].first_seen_at, "2026-02-20T10:00:00.000Z"); // cat: her February lead
  });

  test("from/to filter on the last activity date", async () => {
    const { key } = await marchAccount();
    const inWindow = (q: string) => env.get(key, `/journeys?${q}`).then((r) => emails(r.body.data.journeys));
    // cat (Feb 20, again Mar 15) is in; eve (Mar 14, last Mar 30) and ann (last Mar 12) are out.
    assert.deepEqual(await inWindow("from=2026-03-14&to=2026-03-29"), [
      "dan@x.test",
      "bob@x.test",
      "cat@x.test",
    ]);
    // `to` is inclusive: eve's last day.
    assert.deepEqual(await inWindow("from=2026-03-14&to=2026-03-30"), [
      "eve@x.test",
      "dan@x.test",
      "bob@x.test",
      "cat@x.test",
    ]);
    // `from` alone runs to today (Mar 31).
    assert.deepEqual(await inWindow("from=2026-03-12"), [
      "eve@x.test",
      "dan@x.test",
      "bob@x.test",
      "cat@x.test",
      "ann@x.test",
    ]);
    assert.deepEqual(await inWindow("from=2026-03-01&to=2026-03-01"), ["hal_50%@x.test"]);
    assert.deepEqual(await inWindow("from=2026-02-01&to=2026-02-28"), []); // cat's Feb lead is not her last
    // The window does not touch coverage.
    assert.deepEqual((await env.get(key, "/journeys?from=2026-02-01&to=2026-02-28")).body.data.coverage, {
      web_touchpoints_since: "2026-03-02",
    });
    assert.deepEqual(await env.get(key, "/journeys?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });

  test("search: an email fragment, any case, with % and _ taken literally", async () => {
    const { key } = await marchAccount();
    const found = (q: string) =>
      env.get(key, `/journeys?search=${encodeURIComponent(q)}`).then((r) => emails(r.body.data.journeys));
    assert.deepEqual(await found("ANN@X"), ["ann@x.test"]);
    assert.deepEqual(await found("100Pct"), ["gus.100pct@x.test"]);
    assert.deepEqual(await found("_"), ["hal_50%@x.test"]);
    assert.deepEqual(await found("%"), ["hal_50%@x.test"]);
    assert.deepEqual(await found("l_5"), ["hal_50%@x.test"]);
    assert.deepEqual(await found("a_n"), []); // `_` is no wildcard: "ann" does not match
    assert.deepEqual(await found("x.test"), JOURNEY_ORDER);
    assert.deepEqual(await found("nobody"), []);
    assert.deepEqual(
      emails(
        (await env.get(key, "/journeys?search=x.test&from=2026-03-14&to=2026-03-29")).body.data.journeys,
      ),
      ["dan@x.test", "bob@x.test", "cat@x.test"],
    );
  });

  test("paging: limit 2 over offsets 0, 2, 4, 6 gives every contact once, in order", async () => {
    const { key } = await marchAccount();
    const pages = await walk(key, "/journeys", "journeys", 2);
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 2, 1],
    );
    assert.deepEqual(emails(pages.flat() as { contact: { email: string } }[]), JOURNEY_ORDER);
    const beyond = (await env.get(key, "/journeys?limit=2&offset=7")).body.data;
    assert.deepEqual([beyond.paging, beyond.journeys], [{ limit: 2, offset: 7, returned: 0 }, []]);
    // Paging within a window and a search.
    const windowed = await walk(key, "/journeys?from=2026-03-14&to=2026-03-30&search=x.test", "journeys", 3);
    assert.deepEqual(emails(windowed.flat() as { contact: { email: string } }[]), [
      "eve@x.test",
      "dan@x.test",
      "bob@x.test",
      "cat@x.test",
    ]);
  });

  test("coverage: the first web touchpoint's day in the account's timezone; null without one", async () => {
    // 05:00 UTC on Mar 2 is still Mar 1 in Los Angeles (UTC-8); the earlier conversion does not count.
    const la = await seedAccount(env.db, { timezone: "America/Los_Angeles" });
    await loadFixture(env.db, la.accountId, {
      touchpoints: [
        {
          id: "conv",
          email: "zoe@x.test",
          kind: "conversion",
          event_type: "form_submit",
          occurred_at: at("2026-02-25"),
        },
        {
          id: "web",
          email: "zoe@x.test",
          kind: "web",
          event_type: "page_view",
          occurred_at: at("2026-03-02", "05:00:00"),
        },
      ],
    });
    const laKey = await la.key(["read:journeys"]);
    assert.deepEqual((await env.get(laKey, "/journeys")).body.data.coverage, {
      web_touchpoints_since: "2026-03-01",
    });
    // The window is in the account's days too: zoe's last activity is on Mar 1 there.
    assert.deepEqual(
      emails((await env.get(laKey, "/journeys?from=2026-03-01&to=2026-03-01")).body.data.journeys),
      ["zoe@x.test"],
    );
    assert.deepEqual(
      emails((await env.get(laKey, "/journeys?from=2026-03-02&to=2026-03-02")).body.data.journeys),
      [],
    );

    const crmOnly = await seedAccount(env.db);
    await loadFixture(env.db, crmOnly.accountId, {
      events: [
        { id: "l", event_type: "lead", event_datetime: at("2026-03-05"), contact_email: "yan@x.test" },
      ],
    });
    const crmBody = (await env.get(await crmOnly.key(["read:journeys"]), "/journeys")).body.data;
    assert.deepEqual(crmBody.coverage, { web_touchpoints_since: null });
    assert.deepEqual(emails(crmBody.journeys), ["yan@x.test"]);

    const empty = await seedAccount(env.db);
    assert.deepEqual(await env.get(await empty.key(["read:journeys"]), "/journeys"), {
      status: 200,
      body: {
        data: {
          coverage: { web_touchpoints_since: null },
          paging: { limit: 50, offset: 0, returned: 0 },
          journeys: [],
        },
      },
    });
  });
});

describe("paging through ties", () => {
  test("everything at one instant: pages still partition the big page, for both lists", async () => {
    // Seven contacts, each with a lead and a page view at the very same instant: the order among
    // them is the tie-break's alone, and offset paging must follow it page after page.
    const account = await seedAccount(env.db);
    const people = ["p1", "p2", "p3", "p4", "p5", "p6", "p7"].map((p) => `${p}@x.test`);
    await loadFixture(env.db, account.accountId, {
      touchpoints: people.map((email, i) => ({
        id: `view-${i}`,
        email,
        kind: "web",
        event_type: "page_view",
        occurred_at: at("2026-03-10"),
      })),
      events: people.map((email, i) => ({
        id: `lead-${i}`,
        event_type: "lead",
        event_datetime: at("2026-03-10"),
        contact_email: email,
      })),
    });
    const key = await account.key(["read:journeys"]);

    const all = (await env.get(key, "/journeys")).body.data.journeys;
    assert.deepEqual([...emails(all)].sort(), people);
    const pages = await walk(key, "/journeys", "journeys", 2);
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 2, 1],
    );
    assert.deepEqual(emails(pages.flat() as { contact: { email: string } }[]), emails(all));

    const feed = (await env.get(key, "/touchpoints")).body.data.touchpoints;
    assert.equal(feed.length, 14);
    const feedPages = await walk(key, "/touchpoints", "touchpoints", 3);
    assert.deepEqual(
      feedPages.map((p) => p.length),
      [3, 3, 3, 3, 2],
    );
    const ids = (points: { id: string }[]) => points.map((t) => t.id);
    assert.deepEqual(ids(feedPages.flat() as { id: string }[]), ids(feed));
    assert.equal(new Set(ids(feed)).size, 14);
  });
});

describe("limits of /journeys and /touchpoints", () => {
  test("defaults 50 and 100, clamped to 200 and 500; limit 0 and offset -1 → 400", async () => {
    const account = await seedAccount(env.db);
    // 501 leads of 501 contacts, one a minute: 501 journeys and 501 conversion touchpoints.
    const leads = Array.from({ length: 501 }, (_, i) => ({
      id: `lead-${i}`,
      event_type: "lead",
      event_datetime: new Date(Date.parse("2026-03-10T00:00:00Z") + i * 60_000).toISOString(),
      contact_email: `p${i}@x.test`,
    }));
    await loadFixture(env.db, account.accountId, { events: leads });
    const key = await account.key(["read:journeys"]);

    const paging = async (url: string) => (await env.get(key, url)).body.data.paging;
    assert.deepEqual(await paging("/journeys"), { limit: 50, offset: 0, returned: 50 });
    assert.deepEqual(await paging("/journeys?limit=1000"), { limit: 200, offset: 0, returned: 200 });
    assert.deepEqual(await paging("/journeys?limit=200&offset=500"), {
      limit: 200,
      offset: 500,
      returned: 1,
    });
    assert.deepEqual(await paging("/touchpoints"), { limit: 100, offset: 0, returned: 100 });
    assert.deepEqual(await paging("/touchpoints?limit=1000"), { limit: 500, offset: 0, returned: 500 });
    assert.deepEqual(await paging("/touchpoints?limit=1000&offset=500"), {
      limit: 500,
      offset: 500,
      returned: 1,
    });
    // Newest first: the last lead leads both lists, the first one is alone on the last page.
    assert.equal(
      (await env.get(key, "/journeys?limit=1")).body.data.journeys[0].contact.email,
      "p500@x.test",
    );
    assert.equal(
      (await env.get(key, "/touchpoints?offset=500")).body.data.touchpoints[0].contact_email,
      "p0@x.test",
    );

    for (const path of ["/journeys", "/touchpoints"]) {
      assert.deepEqual(await env.get(key, `${path}?limit=0`), {
        status: 400,
        body: { error: "limit: must be at least 1" },
      });
      assert.deepEqual(await env.get(key, `${path}?offset=-1`), {
        status: 400,
        body: { error: "offset: must be at least 0" },
      });
      assert.deepEqual(await env.get(key, `${path}?limit=ten`), {
        status: 400,
        body: { error: "limit: must be an integer" },
      });
    }
  });
});

describe("GET /journeys/contact", () => {
  test("counts include page views; the chain leaves them out unless asked", async () => {
    const { key } = await marchAccount();
    const r = await env.get(key, "/journeys/contact?email=ann@x.test");
    assert.equal(r.status, 200);
    const body = r.body.data;
    assert.deepEqual(Object.keys(body).sort(), [
      "contact",
      "counts",
      "first_touch_at",
      "last_touch_at",
      "touchpoints",
    ]);
    assert.deepEqual(body.contact, {
      email: "ann@x.test",
      phone: "+33600000001",
      first_name: "Ann",
      last_name: "Smith",
    });
    // Web: 2 page views + the video play; conversion: lead, form submit, booking, sale, payment.
    assert.deepEqual(body.counts, { total: 8, web: 3, conversion: 5, page_view: 2 });
    // From and to the page views, even though the chain below leaves them out.
    assert.equal(body.first_touch_at, "2026-03-02T09:00:00.000Z");
    assert.equal(body.last_touch_at, "2026-03-12T09:00:00.000Z");
    assert.deepEqual(labels(body.touchpoints), [
      "2026-03-03T09:00 ann@x.test web video_play",
      "2026-03-04T10:00 ann@x.test conversion lead",
      "2026-03-05T11:00 ann@x.test conversion form_submit",
      "2026-03-06T10:00 ann@x.test conversion booking",
      "2026-03-10T10:00 ann@x.test conversion sale",
      "2026-03-11T10:00 ann@x.test conversion payment",
    ]);
    const withViews = [
      "2026-03-02T09:00 ann@x.test web page_view",
      "2026-03-03T09:00 ann@x.test web video_play",
      "2026-03-04T10:00 ann@x.test conversion lead",
      "2026-03-05T11:00 ann@x.test conversion form_submit",
      "2026-03-06T10:00 ann@x.test conversion booking",
      "2026-03-10T10:00 ann@x.test conversion sale",
      "2026-03-11T10:00 ann@x.test conversion payment",
      "2026-03-12T09:00 ann@x.test web page_view",
    ];
    for (const flag of ["true", "1"]) {
      const all = (await env.get(key, `/journeys/contact?email=ann@x.test&pageviews=${flag}`)).body.data;
      assert.deepEqual(labels(all.touchpoints), withViews, flag);
      assert.deepEqual(all.counts, body.counts, flag);
    }
    for (const flag of ["false", "0"]) {
      const some = (await env.get(key, `/journeys/contact?email=ann@x.test&pageviews=${flag}`)).body.data;
      assert.equal(some.touchpoints.length, 6, flag);
    }
    assert.deepEqual(await env.get(key, "/journeys/contact?email=ann@x.test&pageviews=maybe"), {
      status: 400,
      body: { error: "pageviews: must be true, 1, false or 0" },
    });
  });

  test("each point carries the UTM, ad ids and click ids of its own moment", async () => {
    const { key } = await marchAccount();
    const chain = (await env.get(key, "/journeys/contact?email=ann@x.test&pageviews=true")).body.data
      .touchpoints;
    assert.deepEqual(
      chain.map(
        (t: { event_type: string; utm: unknown; ad_ids: unknown; click_ids: unknown; is_paid: boolean }) => [
          t.event_type,
          t.utm,
          t.ad_ids,
          t.click_ids,
          t.is_paid,
        ],
      ),
      [
        [
          "page_view",
          utm({
            source: "facebook",
            medium: "paid_social",
            campaign: "spring_sale",
            content: "ad_one",
            campaign_name: "Spring Sale",
            adset_name: "Lookalike 1%",
            ad_name: "Ad One",
          }),
          adIds({ ad_id: FB_AD, adset_id: FB_ADSET, campaign_id: FB_CAMPAIGN }),
          { fbclid: "IwAR-fb-1" },
          true,
        ],
        [
          "video_play",
          utm({
            source: "google",
            medium: "cpc",
            campaign: "brand",
            term: "coaching program",
            channel: "paid_search",
          }),
          adIds(),
          { gclid: "Cj0-g-2" },
          true,
        ],
        ["lead", utm({ source: "facebook", medium: "paid_social" }), adIds({ ad_id: FB_AD }), {}, true],
        [
          "form_submit",
          utm({ source: "tiktok", medium: "paid_social", campaign: "march_news" }),
          adIds(),
          { ttclid: "TT-5" },
          true,
        ],
        ["booking", utm({ source: "email", medium: "newsletter", campaign: "reminder" }), adIds(), {}, false],
        ["sale", utm({ campaign: "closing" }), adIds(), {}, false],
        ["payment", utm({ campaign: "installments" }), adIds(), {}, false],
        ["page_view", utm(), adIds(), {}, false],
      ],
    );
    // One point in full: the sale (value = its amount; an imported CRM event).
    const sale = chain[5];
    assert.match(sale.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(sale, {
      id: sale.id,
      occurred_at: "2026-03-10T10:00:00.000Z",
      kind: "conversion",
      event_type: "sale",
      contact_email: "ann@x.test",
      visitor_id: null,
      session_id: null,
      url: null,
      referrer: null,
      utm: utm({ campaign: "closing" }),
      ad_ids: adIds(),
      click_ids: {},
      channel: null,
      platform: null,
      is_paid: false,
      value: 1500,
      currency: "EUR",
      product: "coaching",
      is_imported: true,
      resolution: "unresolved",
      resolved_platform: null,
      resolved_ad_id: null,
    });
    assert.deepEqual(
      [chain[1].channel, chain[1].url, chain[1].visitor_id, chain[1].session_id],
      ["paid_search", "https://x.test/video", "v-ann", "s-ann-2"],
    );
  });

  test("the email is normalized; an unknown one gives an empty journey", async () => {
    const { key } = await marchAccount();
    const mixed = await env.get(key, `/journeys/contact?email=${encodeURIComponent("  Ann@X.TEST ")}`);
    assert.equal(mixed.status, 200);
    assert.equal(mixed.body.data.contact.email, "ann@x.test");
    assert.equal(mixed.body.data.touchpoints.length, 6);
    const hal = await env.get(key, `/journeys/contact?email=${encodeURIComponent("HAL_50%@x.test")}`);
    assert.deepEqual(hal.body.data.counts, { total: 1, web: 0, conversion: 1, page_view: 0 });
    // The purchase-only contact exists, with nothing in its journey.
    const ivy = (await env.get(key, "/journeys/contact?email=ivy@x.test")).body.data;
    assert.deepEqual(
      [ivy.contact.email, ivy.counts, ivy.touchpoints, ivy.first_touch_at],
      ["ivy@x.test", { total: 0, web: 0, conversion: 0, page_view: 0 }, [], null],
    );
    assert.deepEqual(await env.get(key, "/journeys/contact?email=nobody@x.test"), {
      status: 200,
      body: {
        data: {
          contact: null,
          first_touch_at: null,
          last_touch_at: null,
          counts: { total: 0, web: 0, conversion: 0, page_view: 0 },
          touchpoints: [],
        },
      },
    });
  });

  test("email: missing or malformed → 400", async () => {
    const { key } = await marchAccount();
    assert.deepEqual(await env.get(key, "/journeys/contact"), {
      status: 400,
      body: { error: "email: is required" },
    });
    assert.deepEqual(await env.get(key, "/journeys/contact?pageviews=true"), {
      status: 400,
      body: { error: "email: is required" },
    });
    for (const bad of ["ann", "ann@x", "ann@@x.test", ""]) {
      assert.deepEqual(
        await env.get(key, `/journeys/contact?email=${encodeURIComponent(bad)}`),
        { status: 400, body: { error: "email: must be an email address" } },
        bad,
      );
    }
  });
});

describe("GET /touchpoints", () => {
  test("a touch's platform is the captured one, else that of the ad it resolved to", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      spend: [
        {
          platform: "meta",
          ad_id: "A1",
          ad_name: "Ad",
          campaign_id: "C1",
          campaign_name: "C",
          date: "2026-03-01",
          total_spend: 1,
        },
      ],
      touchpoints: [
        {
          id: "t1",
          email: "zoe@x.test",
          kind: "web",
          event_type: "page_view",
          occurred_at: "2026-03-02T10:00:00Z",
          ad_id: "A1",
        },
        {
          id: "t2",
          email: "zoe@x.test",
          kind: "web",
          event_type: "page_view",
          occurred_at: "2026-03-03T10:00:00Z",
          utm_source: "newsletter",
        },
      ],
    });
    const key = await account.key(["read:journeys"]);
    const feed = (await env.get(key, "/touchpoints")).body.data.touchpoints;
    assert.deepEqual(
      feed.map((t: { platform: string | null; resolved_ad_id: string | null }) => [
        t.platform,
        t.resolved_ad_id,
      ]),
      [
        [null, null],
        ["meta", "A1"],
      ],
    );
    const [journey] = (await env.get(key, "/journeys")).body.data.journeys;
    assert.equal(journey.first_touch.platform, "meta");
    assert.equal(journey.last_touch.platform, null);
  });

  test("the object, newest first, and one imported touchpoint in full", async () => {
    const { key } = await marchAccount();
    const r = await env.get(key, "/touchpoints");
    assert.equal(r.status, 200);
    const body = r.body.data;
    assert.deepEqual(Object.keys(body).sort(), ["paging", "touchpoints"]);
    assert.deepEqual(body.paging, { limit: 100, offset: 0, returned: 19 });
    assert.deepEqual(labels(body.touchpoints), FEED);
    const form = body.touchpoints[13];
    assert.deepEqual(form, {
      id: form.id,
      occurred_at: "2026-03-05T11:00:00.000Z",
      kind: "conversion",
      event_type: "form_submit",
      contact_email: "ann@x.test",
      visitor_id: null,
      session_id: null,
      url: null,
      referrer: null,
      utm: utm({ source: "tiktok", medium: "paid_social", campaign: "march_news" }),
      ad_ids: adIds(),
      click_ids: { ttclid: "TT-5" },
      channel: null,
      platform: null,
      is_paid: true,
      value: 49.9,
      currency: "EUR",
      product: "ebook",
      is_imported: true,
      resolution: "unresolved",
      resolved_platform: null,
      resolved_ad_id: null,
    });
    // The anonymous visit has no contact; the Facebook page view keeps its ids as strings.
    const anon = body.touchpoints[4];
    assert.deepEqual([anon.contact_email, anon.visitor_id, anon.utm.source], [null, "v-anon", "reddit"]);
    const fb = body.touchpoints[16];
    assert.deepEqual(fb.ad_ids, adIds({ ad_id: FB_AD, adset_id: FB_ADSET, campaign_id: FB_CAMPAIGN }));
    assert.equal(typeof fb.ad_ids.ad_id, "string");
    assert.deepEqual(
      [fb.url, fb.referrer, fb.click_ids],
      ["https://x.test/offer", "https://facebook.com/", { fbclid: "IwAR-fb-1" }],
    );
    // Ids are unique UUIDs.
    const ids = body.touchpoints.map((t: { id: string }) => t.id);
    assert.equal(new Set(ids).size, 19);
  });

  test("kind=web and kind=conversion; any other kind → 200 with error and no touchpoints", async () => {
    const { key } = await marchAccount();
    const web = (await env.get(key, "/touchpoints?kind=web")).body.data;
    assert.deepEqual(labels(web.touchpoints), [
      "2026-03-21T10:00 bob@x.test web page_view",
      "2026-03-20T10:00 bob@x.test web page_view",
      "2026-03-18T10:00 v-anon web page_view",
      "2026-03-15T08:00 cat@x.test web page_view",
      "2026-03-12T09:00 ann@x.test web page_view",
      "2026-03-03T09:00 ann@x.test web video_play",
      "2026-03-02T09:00 ann@x.test web page_view",
    ]);
    assert.deepEqual(web.paging, { limit: 100, offset: 0, returned: 7 });
    const conversion = (await env.get(key, "/touchpoints?kind=conversion")).body.data;
    assert.deepEqual(
      labels(conversion.touchpoints),
      FEED.filter((l) => l.includes(" conversion ")),
    );
    assert.equal(conversion.touchpoints.length, 12);
    const invalid = { error: "invalid kind (web|conversion)", touchpoints: [] };
    for (const kind of ["email", "page_view", ""]) {
      assert.deepEqual(
        await env.get(key, `/touchpoints?kind=${kind}`),
        { status: 200, body: { ...invalid, data: invalid } },
        kind,
      );
    }
  });

  test("from/to on the touch's own time", async () => {
    const { key } = await marchAccount();
    const inWindow = async (q: string) =>
      labels((await env.get(key, `/touchpoints?${q}`)).body.data.touchpoints);
    assert.deepEqual(await inWindow("from=2026-03-20&to=2026-03-21"), [
      "2026-03-21T10:00 bob@x.test web page_view",
      "2026-03-20T10:00 bob@x.test web page_view",
    ]);
    assert.deepEqual(await inWindow("from=2026-03-08&to=2026-03-08&kind=conversion"), [
      "2026-03-08T12:00 gus.100pct@x.test conversion sale",
      "2026-03-08T10:00 gus.100pct@x.test conversion lead",
    ]);
    assert.deepEqual(await inWindow("from=2026-02-01&to=2026-02-28"), [
      "2026-02-20T10:00 cat@x.test conversion lead",
    ]);
  });

  test("paging: limit 4 over offsets 0, 4, …, 16 gives every touchpoint once, in order", async () => {
    const { key } = await marchAccount();
    const pages = await walk(key, "/touchpoints", "touchpoints", 4);
    assert.deepEqual(
      pages.map((p) => p.length),
      [4, 4, 4, 4, 3],
    );
    assert.deepEqual(labels(pages.flat() as Point[]), FEED);
    const webPages = await walk(key, "/touchpoints?kind=web", "touchpoints", 2);
    assert.deepEqual(
      webPages.map((p) => p.length),
      [2, 2, 2, 1],
    );
    assert.deepEqual(
      labels(webPages.flat() as Point[]),
      FEED.filter((l) => l.includes(" web ")),
    );
  });

  test("another account's touchpoints never appear, even for the same email", async () => {
    const { key } = await marchAccount();
    const other = await seedAccount(env.db);
    await loadFixture(env.db, other.accountId, {
      touchpoints: [
        {
          id: "w-ann-fb", // same external id as in the first account
          email: "ann@x.test",
          kind: "web",
          event_type: "page_view",
          occurred_at: at("2026-03-31", "08:00:00"),
          utm_source: "other-account",
        },
      ],
      events: [
        { id: "ann-lead", event_type: "lead", event_datetime: at("2026-03-31"), contact_email: "ann@x.test" },
      ],
    });
    const otherKey = await other.key(["read:journeys"]);

    assert.deepEqual(labels((await env.get(key, "/touchpoints")).body.data.touchpoints), FEED);
    assert.deepEqual((await env.get(key, "/journeys/contact?email=ann@x.test")).body.data.counts, {
      total: 8,
      web: 3,
      conversion: 5,
      page_view: 2,
    });
    assert.deepEqual(emails((await env.get(key, "/journeys")).body.data.journeys), JOURNEY_ORDER);

    assert.deepEqual(labels((await env.get(otherKey, "/touchpoints")).body.data.touchpoints), [
      "2026-03-31T10:00 ann@x.test conversion lead",
      "2026-03-31T08:00 ann@x.test web page_view",
    ]);
    const otherAnn = (await env.get(otherKey, "/journeys/contact?email=ann@x.test&pageviews=1")).body.data;
    assert.deepEqual(otherAnn.counts, { total: 2, web: 1, conversion: 1, page_view: 1 });
    assert.equal(otherAnn.touchpoints[0].utm.source, "other-account");
    const otherJourneys = (await env.get(otherKey, "/journeys")).body.data;
    assert.deepEqual(emails(otherJourneys.journeys), ["ann@x.test"]);
    assert.deepEqual(otherJourneys.coverage, { web_touchpoints_since: "2026-03-31" });
  });

  test("read:journeys is the scope of all three routes", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:contacts"]);
    for (const path of ["/journeys", "/journeys/contact?email=ann@x.test", "/touchpoints"]) {
      assert.deepEqual(
        await env.get(key, path),
        { status: 403, body: { error: "insufficient_scope", required: "read:journeys" } },
        path,
      );
    }
  });
});
