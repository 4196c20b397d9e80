import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parse } from "csv-parse/sync";
import { type SeededAccount, seedAccount, seedRecordedCall, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";
import { signedIn, type WebSession } from "../helpers/web.ts";

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });

const MARCH = "from=2026-03-01&to=2026-03-31";

const ad = (id: string, date: string, spend: number) => ({
  platform: "meta",
  ad_id: id,
  ad_name: `Ad ${id}`,
  campaign_id: "C1",
  campaign_name: "Spring",
  adset_id: "S1",
  adset_name: "Set",
  date,
  total_spend: spend,
});
const click = (id: string, email: string, adId: string, day: string) => ({
  id,
  email,
  session_id: `s-${id}`,
  kind: "web",
  event_type: "page_view",
  occurred_at: at(day),
  utm_source: "facebook",
  utm_medium: "paid",
  utm_campaign: "Spring",
  utm_content: `Ad ${adId}`,
  ad_id: adId,
});
const event = (
  id: string,
  type: string,
  day: string,
  email: string,
  extra: Record<string, unknown> = {},
) => ({
  id,
  event_type: type,
  event_datetime: at(day),
  contact_email: email,
  ...extra,
});

/**
 * docs/attribution.md's worked example (ann: ad A first, ad B last, a sale of 1000 with an
 * installment of 500 and a refund of 200, booked with Rita), plus two contacts with a lead only,
 * and two analyzed calls with ann, one of them with a transcript.
 */
const march: Fixture = {
  spend: [ad("A", "2026-03-01", 100), ad("B", "2026-03-05", 50)],
  touchpoints: [click("t1", "ann@x.test", "A", "2026-03-02"), click("t2", "ann@x.test", "B", "2026-03-04")],
  events: [
    event("l1", "lead", "2026-03-06", "ann@x.test"),
    event("b1", "booking", "2026-03-07", "ann@x.test", {
      booking_date: "2026-03-10",
      booking_time: "10:00",
      assigned_user_name: "Rita",
    }),
    event("s1", "sale", "2026-03-12", "ann@x.test", {
      amount: 1000,
      product_key: "coaching",
      assigned_user_name: "Rita",
    }),
    event("p1", "payment", "2026-03-20", "ann@x.test", {
      amount: 500,
      payment_status: "paid",
      product_key: "coaching",
    }),
    event("r1", "payment", "2026-03-25", "ann@x.test", {
      amount: 200,
      payment_status: "refunded",
      product_key: "coaching",
    }),
    event("l2", "lead", "2026-03-27", "bob@x.test"),
    event("l3", "lead", "2026-03-28", "cat@x.test", { contact_name: "Cat Stevens" }),
  ],
  calls: [
    {
      id: "k1",
      starts_at: "2026-03-09T09:00:00Z",
      title: "Discovery with Ann",
      duration_sec: 1800,
      call_analysis_id: "ana-k1",
      summary: "Wants coaching",
      call_type: "discovery",
      is_qualified: true,
      icp_fit_score: 72.5,
      scorecard_total: 81.25,
      rep_id: "rep-1",
      markers: [{ ts: 12, label: "Budget", status: "hit" }],
      participant_emails: ["ann@x.test", "rita@seller.test"],
      transcript: [
        {
          start_ms: 0,
          end_ms: 900,
          speaker_id: "spk_0",
          speaker_label: "Rita",
          text: "Hello Ann",
          confidence: 0.9,
        },
        {
          start_ms: 1000,
          end_ms: 1900,
          speaker_id: "spk_1",
          speaker_label: "Ann",
          text: "Hi",
          confidence: 0.8,
        },
      ],
    },
  ],
};

interface World {
  account: SeededAccount;
  other: SeededAccount;
  key: string;
  web: WebSession;
  otherWeb: WebSession;
  transcribedCall: number;
  recordedCall: number;
  foreignCall: number;
}
let w: World;
let seeded: Promise<void> | undefined;

/** The fixtures, written once for the whole file (every test only reads them). */
const seed = () => {
  seeded ??= seedWorld();
  return seeded;
};

async function seedWorld(): Promise<void> {
  const account = await seedAccount(env.db);
  const other = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, march);
  await loadFixture(env.db, other.accountId, { events: [event("z1", "lead", "2026-03-10", "zed@x.test")] });
  const recordedCall = await seedRecordedCall(env.db, env.app.files, account.accountId, {
    startsAt: "2026-03-15T14:00:00Z",
    participants: ["ann@x.test"],
  });
  const foreignCall = await seedRecordedCall(env.db, env.app.files, other.accountId, {
    startsAt: "2026-03-15T14:00:00Z",
    participants: ["zed@x.test"],
  });
  const key = await account.key(["*"]);
  const calls = (await env.get(key, "/calls")).body.data as { artifact_id: number; title: string }[];
  const transcribedCall = calls.find((c) => c.title === "Discovery with Ann")?.artifact_id;
  assert.ok(transcribedCall);
  w = {
    account,
    other,
    key,
    web: await signedIn(env.app, env.db, account.owner),
    otherWeb: await signedIn(env.app, env.db, other.owner),
    transcribedCall,
    recordedCall,
    foreignCall,
  };
}

/** The page's HTML, asserting a 200. */
async function page(path: string): Promise<string> {
  const res = await w.web.get(path);
  assert.equal(res.statusCode, 200, `${path}: ${res.statusCode}`);
  assert.match(String(res.headers["content-type"]), /^text\/html/);
  return res.body;
}

/** A table's CSV export, parsed; asserts the CSV answer. */
async function csv(path: string, table: string): Promise<Record<string, string>[]> {
  const res = await w.web.get(`${path}${path.includes("?") ? "&" : "?"}export=${table}`);
  assert.equal(res.statusCode, 200, `${path} ${table}: ${res.statusCode}`);
  assert.match(String(res.headers["content-type"]), /^text\/csv/);
  return parse(res.body, { columns: true }) as Record<string, string>[];
}

/** A JSON value as the CSV writes it. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.join("; ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** `utm.source` reads `row.utm.source`: the CSV flattens the API's nested fields by their path. */
function field(row: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | null)?.[k], row);
}

/** Every CSV column is an API field, and every cell is that field's value, row by row. */
function assertCsvIsApi(rows: Record<string, string>[], api: Record<string, unknown>[]): void {
  assert.equal(rows.length, api.length);
  assert.ok(rows.length > 0, "a table with rows");
  for (const [i, row] of rows.entries()) {
    for (const [name, value] of Object.entries(row)) {
      const apiRow = api[i] ?? {};
      assert.ok(
        field(apiRow, name) !== undefined || (name.split(".")[0] ?? "") in apiRow,
        `API field ${name}`,
      );
      assert.equal(value, cell(field(apiRow, name)), `row ${i} ${name}`);
    }
  }
}

/** `data-kpi` / `data-field` values of a page, by name. */
function dataValues(html: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of html.matchAll(/data-(?:kpi|field)="([^"]+)" data-value="([^"]*)"/g)) {
    found[m[1] as string] = (m[2] as string).replace(/&amp;/g, "&");
  }
  return found;
}

const api = async (url: string) => {
  const res = await env.get(w.key, url);
  assert.equal(res.status, 200, url);
  return res.body.data;
};

const PAGES = [
  "/reports/attribution",
  "/reports/sales",
  "/reports/funnel",
  "/contacts",
  "/contacts/journey?email=ann@x.test",
  "/calls",
  "/calls/view?id=1",
];

describe("report pages: access", () => {
  test("signed out, every page sends to the sign-in page", async () => {
    await seed();
    for (const path of PAGES) {
      const res = await env.app.inject({ method: "GET", url: path });
      assert.equal(res.statusCode, 303, path);
      assert.match(String(res.headers.location), /^\/sign-in\?next=/, path);
    }
  });

  test("each page is in the navigation and has a labelled, scoped table", async () => {
    await seed();
    for (const path of ["/reports/attribution", "/reports/sales", "/reports/funnel", "/contacts", "/calls"]) {
      const html = await page(path);
      assert.match(html, new RegExp(`<a href="${path}" aria-current="page"`), path);
      assert.match(html, /<th scope="col"/, path);
      assert.doesNotMatch(html, /style=|<script>/, path);
    }
  });

  test("an invalid from gives a 400 page naming the problem", async () => {
    await seed();
    for (const path of ["/reports/attribution", "/reports/sales", "/reports/funnel", "/contacts", "/calls"]) {
      const bad = await w.web.get(`${path}?from=2026-02-30`);
      assert.equal(bad.statusCode, 400, path);
      assert.match(bad.body, /from: is not a calendar date/, path);
      const late = await w.web.get(`${path}?from=2026-03-10&to=2026-03-01`);
      assert.equal(late.statusCode, 400, path);
      assert.match(late.body, /from: must not be after to/, path);
    }
    const limit = await w.web.get("/contacts?limit=0");
    assert.equal(limit.statusCode, 400);
    assert.match(limit.body, /limit: must be at least 1/);
  });
});

describe("/reports/attribution", () => {
  test("per ad: first touch, last touch, assisted and net revenue as GET /attribution", async () => {
    await seed();
    const html = await page(`/reports/attribution?${MARCH}`);
    assert.match(html, /Download CSV/);
    const rows = await csv(`/reports/attribution?${MARCH}`, "ads");
    assertCsvIsApi(rows, await api(`/attribution?${MARCH}`));
    // By hand (docs/attribution.md): A took the first touch, B the last with every result.
    const [a, b] = rows;
    assert.deepEqual(
      [a?.out_ad_id, a?.out_total_spend, a?.out_sales_ft, a?.out_revenue_ft, a?.out_sales_lt],
      ["A", "100", "1", "1500", "0"],
    );
    assert.deepEqual(
      [
        b?.out_ad_id,
        b?.out_total_spend,
        b?.out_sales_lt,
        b?.out_revenue_lt,
        b?.out_refund_amount,
        b?.out_net_revenue,
      ],
      ["B", "50", "1", "1500", "200", "1300"],
    );
    assert.match(html, /€1,300\.00/);
  });

  test("ROI per ad as GET /attribution/report", async () => {
    await seed();
    const rows = await csv(`/reports/attribution?${MARCH}`, "roi");
    assertCsvIsApi(rows, await api(`/attribution/report?${MARCH}`));
    const byAd = Object.fromEntries(rows.map((r) => [r.out_ad_id, r]));
    // (1500 − 50) / 50 and (1300 − 50) / 50; A spent 100 for nothing credited to it.
    assert.deepEqual([byAd.B?.out_roi_gross, byAd.B?.out_roi_net], ["29", "25"]);
    assert.deepEqual([byAd.A?.out_roi_gross, byAd.A?.out_roi_net], ["-1", "-1"]);
    assert.match(await page(`/reports/attribution?${MARCH}`), /2,900 %/);
  });
});

describe("/reports/sales", () => {
  test("the summary and the reps as GET /sales/summary and /sales/reps", async () => {
    await seed();
    const html = await page(`/reports/sales?${MARCH}`);
    const shown = dataValues(html);
    const summary = await api(`/sales/summary?${MARCH}`);
    for (const [name, value] of Object.entries(shown)) assert.equal(value, cell(field(summary, name)), name);
    assert.equal(Object.keys(shown).length, 19);
    assert.deepEqual(
      [shown.sales, shown.revenue, shown.refund_amount, shown.net_revenue, shown["pipeline.leads"]],
      ["1", "1500", "200", "1300", "3"],
    );
    const reps = await csv(`/reports/sales?${MARCH}`, "reps");
    assertCsvIsApi(reps, await api(`/sales/reps?${MARCH}`));
    const rita = reps.find((r) => r.rep_name === "Rita");
    assert.deepEqual(
      [rita?.bookings, rita?.meetings, rita?.shows, rita?.sales, rita?.revenue, rita?.close_rate],
      ["1", "1", "1", "1", "1500", "1"],
    );
  });
});

describe("/reports/funnel", () => {
  test("stages and breakdowns as GET /funnel", async () => {
    await seed();
    const html = await page(`/reports/funnel?${MARCH}`);
    const funnel = await api(`/funnel?${MARCH}`);
    const stages = await csv(`/reports/funnel?${MARCH}`, "stages");
    assertCsvIsApi(stages, funnel.stages);
    // Three leads in March; ann alone went on to a booking, a show and a sale.
    assert.deepEqual(
      stages.map((s) => [s.stage, s.count]),
      [
        ["lead", "3"],
        ["application", "1"],
        ["booking", "1"],
        ["show", "1"],
        ["sale", "1"],
      ],
    );
    assert.equal(dataValues(html).overall_conversion, String(funnel.overall_conversion));
    assert.equal(funnel.overall_conversion, 0.3333);
    for (const name of ["by_source", "by_campaign", "by_product", "time_to_conversion"]) {
      assertCsvIsApi(await csv(`/reports/funnel?${MARCH}`, name), funnel[name]);
    }
  });
});

describe("/contacts", () => {
  test("the list as GET /contacts, each contact linking to its journey", async () => {
    await seed();
    const html = await page("/contacts");
    assertCsvIsApi(await csv("/contacts", "contacts"), await api("/contacts"));
    assert.match(html, /<a href="\/contacts\/journey\?email=ann%40x\.test">ann@x\.test<\/a>/);
    assert.match(html, /<label for="list-search">/);
    assert.doesNotMatch(html, /Next page/);
    assert.doesNotMatch(html, /zed@x\.test/);
  });

  test("search and paging as the API's", async () => {
    await seed();
    const found = await csv("/contacts?search=Stevens", "contacts");
    assert.deepEqual(
      found.map((r) => r.email),
      ["cat@x.test"],
    );
    assertCsvIsApi(found, await api("/contacts?search=Stevens"));
    // An empty search box and empty dates are no filter at all.
    assert.equal((await csv("/contacts?search=&from=&to=", "contacts")).length, 3);
    const first = await page("/contacts?limit=2");
    const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first)?.[1]?.replace(/&amp;/g, "&");
    assert.equal(next, "/contacts?limit=2&offset=2");
    const second = await csv(next, "contacts");
    assertCsvIsApi(second, await api("/contacts?limit=2&offset=2"));
    assert.equal(second.length, 1);
    assert.match(await page(next), /rel="prev">Previous page/);
    // from/to filter on the last event, as the API's.
    assertCsvIsApi(
      await csv("/contacts?from=2026-03-27&to=2026-03-31", "contacts"),
      await api("/contacts?from=2026-03-27&to=2026-03-31"),
    );
  });
});

describe("/contacts/journey", () => {
  test("touchpoints in time order as GET /journeys/contact, and the contact's calls", async () => {
    await seed();
    const path = "/contacts/journey?email=ANN@x.test";
    const html = await page(path);
    const journey = await api("/journeys/contact?email=ann@x.test");
    const touches = await csv(path, "touchpoints");
    assertCsvIsApi(touches, journey.touchpoints);
    assert.deepEqual(
      touches.map((t) => t.event_type),
      ["lead", "booking", "sale", "payment", "payment"],
    );
    const withViews = await csv(`${path}&pageviews=true`, "touchpoints");
    assertCsvIsApi(withViews, (await api("/journeys/contact?email=ann@x.test&pageviews=1")).touchpoints);
    assert.equal(withViews[0]?.["utm.source"], "facebook");
    const shown = dataValues(html);
    assert.equal(shown["counts.total"], String(journey.counts.total));
    assert.equal(shown.first_touch_at, journey.first_touch_at);
    const calls = await csv(path, "calls");
    assertCsvIsApi(calls, await api("/contacts/calls?email=ann@x.test"));
    assert.equal(calls.length, 2);
    assert.match(html, new RegExp(`<a href="/calls/view\\?id=${w.transcribedCall}">`));
    assert.match(html, new RegExp(`<a href="/calls/view\\?id=${w.recordedCall}">`));
  });

  test("a contact of another account, or none, is a 404 page; no email a 400", async () => {
    await seed();
    for (const email of ["zed@x.test", "nobody@x.test"]) {
      const res = await w.web.get(`/contacts/journey?email=${email}`);
      assert.equal(res.statusCode, 404, email);
      assert.doesNotMatch(res.body, /zed@x\.test<\/dd>|lead/);
      assert.equal((await w.web.get(`/contacts/journey?email=${email}&export=touchpoints`)).statusCode, 404);
    }
    assert.equal((await w.otherWeb.get("/contacts/journey?email=zed@x.test")).statusCode, 200);
    const missing = await w.web.get("/contacts/journey");
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /email: is required/);
  });
});

describe("/calls", () => {
  test("the list as GET /calls, each call linking to its page", async () => {
    await seed();
    const html = await page("/calls");
    assertCsvIsApi(await csv("/calls", "calls"), await api("/calls"));
    assert.match(html, new RegExp(`<a href="/calls/view\\?id=${w.transcribedCall}">`));
    const paged = await page("/calls?limit=1");
    assert.match(paged, /href="\/calls\?limit=1&amp;offset=1" rel="next">Next page/);
    assertCsvIsApi(await csv("/calls?limit=1&offset=1", "calls"), await api("/calls?limit=1&offset=1"));
  });

  test("one call: its fields, its transcript, and its recording's signed URL as GET /calls/recording", async () => {
    await seed();
    const html = await page(`/calls/view?id=${w.transcribedCall}`);
    const call = ((await api("/calls")) as { artifact_id: number }[]).find(
      (c) => c.artifact_id === w.transcribedCall,
    ) as Record<string, unknown>;
    const shown = dataValues(html);
    for (const [name, value] of Object.entries(shown)) assert.equal(value, cell(call[name]), name);
    assert.equal(shown.icp_fit_score, "72.5");
    const segments = await csv(`/calls/view?id=${w.transcribedCall}`, "transcript");
    assertCsvIsApi(segments, await api(`/calls/transcript?id=${w.transcribedCall}`));
    assert.deepEqual(
      segments.map((s) => s.text),
      ["Hello Ann", "Hi"],
    );
    assert.match(html, /No recording is stored/);

    const recorded = await page(`/calls/view?id=${w.recordedCall}`);
    const locator = await api(`/calls/recording?id=${w.recordedCall}`);
    const src = /<audio controls[^>]* src="([^"]+)"/.exec(recorded)?.[1]?.replace(/&amp;/g, "&");
    assert.equal(src, locator.audio_url);
    const played = await env.app.inject({ url: new URL(src ?? "").pathname + new URL(src ?? "").search });
    assert.equal(played.statusCode, 200);
    assert.equal(played.headers["content-type"], "audio/wav");
  });

  test("another account's call, or an unknown id, is a 404 page; a bad id a 400", async () => {
    await seed();
    for (const id of [w.foreignCall, 987_654_321]) {
      const res = await w.web.get(`/calls/view?id=${id}`);
      assert.equal(res.statusCode, 404, String(id));
      assert.doesNotMatch(res.body, /<audio|Recorded call/);
    }
    assert.equal((await w.otherWeb.get(`/calls/view?id=${w.foreignCall}`)).statusCode, 200);
    const bad = await w.web.get("/calls/view?id=abc");
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /id: must be a positive integer/);
  });
});

describe("the overview still renders with the tenant barrier on every page", () => {
  test("/ answers 200", async () => {
    await seed();
    await page(`/?${MARCH}`);
  });
});
