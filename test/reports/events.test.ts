import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { GrantedScope } from "../../src/auth/scopes.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

const ids = (data: { id: string }[]) => data.map((e) => e.id);

/** March 2026 in a UTC account; every figure below is worked out by hand from these records. */
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
  ],
  events: [
    {
      id: "l1",
      event_type: "lead",
      event_datetime: at("2026-03-02"),
      contact_email: "ann@x.test",
      utm_ad_id: "A1",
      assigned_user_name: "Alice",
    },
    {
      id: "l2",
      event_type: "lead",
      event_datetime: at("2026-03-03"),
      contact_email: "bob@x.test",
      utm_campaign: "Spring",
      assigned_user_name: "alice",
    },
    { id: "l3", event_type: "lead", event_datetime: at("2026-02-27"), contact_email: "cat@x.test" },
    {
      id: "a1",
      event_type: "application",
      event_subtype: "qualified",
      event_datetime: at("2026-03-04"),
      contact_email: "ann@x.test",
      utm_ad_id: "A1",
      assigned_user_name: "Bob Rep",
    },
    {
      id: "b1",
      event_type: "booking",
      event_datetime: at("2026-03-05"),
      contact_email: "ann@x.test",
      utm_ad_id: "A1",
      booking_date: "2026-03-10",
      booking_time: "10:00",
    },
    {
      id: "b5",
      event_type: "booking",
      event_subtype: "follow_up",
      event_datetime: at("2026-03-07"),
      contact_email: "eve@x.test",
      campaign_name: "Spring",
      booking_date: "2026-03-12",
      cancelled_at: at("2026-03-08"),
    },
    {
      id: "c1",
      event_type: "cancel",
      event_datetime: at("2026-03-09"),
      contact_email: "eve@x.test",
      campaign_name: "Spring",
    },
    // Same instant as l2: the id breaks the tie (n1 before l2, newest first means id descending).
    { id: "n1", event_type: "no_show", event_datetime: at("2026-03-03"), contact_email: "cat@x.test" },
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-11"),
      contact_email: "ann@x.test",
      contact_name: "Ann",
      contact_phone: "+33600000001",
      amount: 1000,
      value: 1200,
      product_key: "coaching",
      product_name: "Coaching",
      utm_ad_id: "A1",
      utm_source: "facebook",
      utm_content: "Ad One",
      is_paid: true,
      assigned_user_name: "Bob Rep",
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
      utm_campaign: "Spring",
    },
    {
      id: "s3",
      event_type: "sale",
      event_datetime: at("2026-03-12"),
      contact_email: "dan@x.test",
      amount: 400,
      utm_campaign: "Spring",
    },
  ],
};

async function marchAccount(scopes: GrantedScope[] = ["read:events"]) {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, march);
  return { account, key: await account.key(scopes) };
}

const inMarch = "from=2026-03-01&to=2026-03-31";

describe("GET /events", () => {
  test("every field of a sale, and the sale-counting fields of its purchase", async () => {
    const { key } = await marchAccount();
    const r = await env.get(key, `/events?type=sale&${inMarch}`);
    assert.equal(r.status, 200);
    // `sale` covers sales and payments, newest first.
    assert.deepEqual(ids(r.body.data), ["r1", "p1", "s2", "s3", "s1"]);
    assert.deepEqual(
      r.body.data.map((e: Record<string, unknown>) => [
        e.id,
        e.counted,
        e.drop_reason,
        e.group_key,
        e.contact_seq,
      ]),
      [
        ["r1", false, "adjustment", "s1", 3], // refund: joins ann's purchase
        ["p1", false, "duplicate", "s1", 2], // installment of s1 within 30 days
        ["s2", false, "baseline", "s2", 1],
        ["s3", true, null, "s3", 1],
        ["s1", true, null, "s1", 1],
      ],
    );
    const s1 = r.body.data[4];
    assert.match(s1.contact_id, /^[0-9a-f-]{36}$/);
    assert.equal(s1.cursor, Buffer.from("2026-03-11T10:00:00.000000Z|s1").toString("base64url"));
    assert.deepEqual(s1, {
      id: "s1",
      event_type: "sale",
      event_subtype: null,
      event_datetime: "2026-03-11T10:00:00.000Z",
      contact_email: "ann@x.test",
      contact_name: "Ann",
      contact_phone: "+33600000001",
      contact_id: s1.contact_id,
      value: 1200,
      amount: 1000,
      product_key: "coaching",
      product_name: "Coaching",
      assigned_user_name: "Bob Rep",
      is_paid: true,
      payment_status: null,
      booking_date: null,
      booking_time: null,
      utm_source: "facebook",
      utm_campaign: null,
      utm_content: "Ad One",
      campaign_name: null,
      calendar_name: null,
      meta_ad_id: null,
      is_baseline: false,
      cancelled_at: null,
      has_more: false,
      counted: true,
      drop_reason: null,
      group_key: "s1",
      contact_seq: 1,
      cursor: s1.cursor,
    });
  });

  test("a booking's dates, and type grouping", async () => {
    const { key } = await marchAccount();
    const bookings = (await env.get(key, "/events?type=booking")).body.data;
    // follow-up bookings are bookings; no window without from/to.
    assert.deepEqual(ids(bookings), ["b5", "b1"]);
    assert.deepEqual(
      [
        bookings[0].event_subtype,
        bookings[0].cancelled_at,
        bookings[1].booking_date,
        bookings[1].booking_time,
      ],
      ["follow_up", "2026-03-08T10:00:00.000Z", "2026-03-10", "10:00"],
    );
    assert.deepEqual(ids((await env.get(key, "/events?type=application")).body.data), ["a1"]); // qualified included
    assert.deepEqual(ids((await env.get(key, "/events?type=payment")).body.data), ["r1", "p1"]);
    assert.deepEqual(ids((await env.get(key, "/events?type=lead")).body.data), ["l2", "l1", "l3"]);
    assert.deepEqual(ids((await env.get(key, "/events?type=cancel")).body.data), ["c1"]);
    assert.deepEqual((await env.get(key, "/events?type=sale_lost")).body.data, []);
    assert.deepEqual(await env.get(key, "/events?type=refund"), {
      status: 400,
      body: {
        error: "type: must be one of lead, application, booking, no_show, sale, cancel, payment, sale_lost",
      },
    });
  });

  test("rep filter (exact name, any case), window, and without parameters every event", async () => {
    const { key } = await marchAccount();
    assert.deepEqual(ids((await env.get(key, "/events?rep=ALICE")).body.data), ["l2", "l1"]);
    assert.deepEqual(ids((await env.get(key, "/events?rep=bob%20rep&type=sale")).body.data), ["s1"]);
    assert.deepEqual((await env.get(key, "/events?rep=Ali")).body.data, []); // not a substring match
    assert.deepEqual(ids((await env.get(key, "/events?from=2026-02-01&to=2026-02-28")).body.data), ["l3"]);
    const all = await env.get(key, "/events");
    assert.equal(all.status, 200);
    assert.deepEqual(ids(all.body.data), [
      "r1",
      "p1",
      "s2",
      "s3",
      "s1",
      "c1",
      "b5",
      "b1",
      "a1",
      "n1",
      "l2",
      "l1",
      "l3",
    ]);
    assert.ok(all.body.data.every((e: { has_more: boolean }) => e.has_more === false));
  });

  test("pages: has_more, the row cursor, and the spec's timestamp cursor", async () => {
    const { key } = await marchAccount();
    const first = (await env.get(key, `/events?${inMarch}&limit=3`)).body.data;
    assert.deepEqual(ids(first), ["r1", "p1", "s2"]);
    assert.ok(first.every((e: { has_more: boolean }) => e.has_more));
    const second = (await env.get(key, `/events?${inMarch}&limit=3&cursor=${first[2].cursor}`)).body.data;
    assert.deepEqual(ids(second), ["s3", "s1", "c1"]);
    // The spec's form: events strictly older than the last row's event_datetime.
    const plain = await env.get(
      key,
      `/events?${inMarch}&cursor=${encodeURIComponent(second[1].event_datetime)}`,
    );
    assert.deepEqual(ids(plain.body.data), ["c1", "b5", "b1", "a1", "n1", "l2", "l1"]);
    // A page ending inside the n1/l2 tie: the row cursor resumes at l2, the timestamp would skip it.
    const tie = (await env.get(key, `/events?${inMarch}&limit=1&cursor=${plain.body.data[3].cursor}`)).body
      .data;
    assert.deepEqual(ids(tie), ["n1"]);
    assert.deepEqual(ids((await env.get(key, `/events?${inMarch}&cursor=${tie[0].cursor}`)).body.data), [
      "l2",
      "l1",
    ]);
    assert.deepEqual(
      ids(
        (await env.get(key, `/events?${inMarch}&cursor=${encodeURIComponent(tie[0].event_datetime)}`)).body
          .data,
      ),
      ["l1"],
    );
  });

  test("limit: default 50, clamped to 200; malformed parameters → 400", async () => {
    const account = await seedAccount(env.db);
    const many = Array.from({ length: 205 }, (_, i) => ({
      id: `e${String(i).padStart(3, "0")}`,
      event_type: "lead",
      event_datetime: at("2026-03-10", `10:${String(i % 60).padStart(2, "0")}:00`),
      contact_email: `p${i}@x.test`,
    }));
    await loadFixture(env.db, account.accountId, { events: many });
    const key = await account.key(["read:events"]);
    assert.equal((await env.get(key, "/events")).body.data.length, 50);
    const clamped = (await env.get(key, "/events?limit=1000")).body.data;
    assert.equal(clamped.length, 200);
    assert.equal(clamped[0].has_more, true);
    assert.deepEqual(await env.get(key, "/events?limit=0"), {
      status: 400,
      body: { error: "limit: must be at least 1" },
    });
    assert.deepEqual(await env.get(key, "/events?limit=1.5"), {
      status: 400,
      body: { error: "limit: must be an integer" },
    });
    const badCursor = {
      status: 400,
      body: { error: "cursor: must be a row's cursor or an event_datetime (ISO 8601)" },
    };
    assert.deepEqual(await env.get(key, "/events?cursor=yesterday!"), badCursor);
    assert.deepEqual(
      await env.get(key, `/events?cursor=${Buffer.from("no-bar").toString("base64url")}`),
      badCursor,
    );
    assert.deepEqual(await env.get(key, "/events?cursor=2026-03-10"), badCursor);
    assert.deepEqual(await env.get(key, "/events?from=2026-03-32"), {
      status: 400,
      body: { error: "from: is not a calendar date" },
    });
  });

  test("property: walking pages with the row cursor partitions the filtered events exactly", async () => {
    // Few distinct instants, so pages keep ending inside ties.
    const instants = [
      at("2026-03-05"),
      at("2026-03-05", "10:00:00.5"),
      at("2026-03-06"),
      at("2026-03-06", "10:00:00.000001"),
    ];
    const eventArb = fc.record({
      instant: fc.integer({ min: 0, max: instants.length - 1 }),
      type: fc.constantFrom("lead", "sale", "payment", "booking"),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 0, maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom(undefined, "sale", "lead"),
        async (generated, limit, type) => {
          const account = await seedAccount(env.db);
          const events = generated.map((g, i) => ({
            id: `ev-${i}`,
            event_type: g.type,
            event_datetime: instants[g.instant],
            contact_email: `c${i}@x.test`,
            instant: g.instant,
            ...(g.type === "payment" ? { payment_status: "paid" } : {}),
          }));
          await loadFixture(env.db, account.accountId, { events: events.map(({ instant, ...e }) => e) });
          const key = await account.key(["read:events"]);
          const kept = events.filter((e) =>
            type === undefined
              ? true
              : type === "sale"
                ? ["sale", "payment"].includes(e.event_type)
                : e.event_type === type,
          );
          // `instants` is in ascending order: newest first is instant index descending, then id descending.
          const expected = kept
            .sort((a, b) => b.instant - a.instant || (a.id < b.id ? 1 : -1))
            .map((e) => e.id);
          const walked: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; page <= events.length + 1; page++) {
            const q = new URLSearchParams({ limit: String(limit) });
            if (type) q.set("type", type);
            if (cursor) q.set("cursor", cursor);
            const r = await env.get(key, `/events?${q}`);
            assert.equal(r.status, 200);
            const rows = r.body.data as { id: string; cursor: string; has_more: boolean }[];
            assert.ok(rows.length <= limit);
            walked.push(...ids(rows));
            if (rows.length === 0 || !rows[0]?.has_more) break;
            assert.equal(rows.length, limit); // a page with a next one is full
            cursor = rows[rows.length - 1]?.cursor;
          }
          assert.deepEqual(walked, expected);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("GET /events/summary", () => {
  test("per ad and campaign, worked out by hand", async () => {
    const { key } = await marchAccount();
    const r = await env.get(key, `/events/summary?${inMarch}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      // l1 a1 b1 s1 carry A1's id. s1's purchase: 1000 + the 500 installment; the refund r1 is not
      // subtracted (total_value is revenue, gross).
      {
        platform: "meta",
        ad_id: "A1",
        ad_name: "Ad One",
        campaign_name: "Camp",
        leads: 1,
        applications: 1,
        bookings: 1,
        sales: 1,
        no_shows: 0,
        cancellations: 0,
        total_value: 1500,
      },
      // Unresolved, naming Spring (utm_campaign or campaign_name): l2, b5 (cancelled), c1, s3; s2 is a
      // baseline sale, not counted.
      {
        platform: null,
        ad_id: null,
        ad_name: null,
        campaign_name: "Spring",
        leads: 1,
        applications: 0,
        bookings: 1,
        sales: 1,
        no_shows: 0,
        cancellations: 2,
        total_value: 400,
      },
      // n1 names no campaign. l3 is in February; p1 and r1 count in no column.
      {
        platform: null,
        ad_id: null,
        ad_name: null,
        campaign_name: null,
        leads: 0,
        applications: 0,
        bookings: 0,
        sales: 0,
        no_shows: 1,
        cancellations: 0,
        total_value: 0,
      },
    ]);
  });

  test("invariant: Σ leads, Σ sales, Σ total_value = dashboard leads, total_sales, revenue", async () => {
    const { key } = await marchAccount(["read:events", "read:dashboard"]);
    for (const window of [inMarch, "from=2026-02-01&to=2026-03-31", "from=2026-03-03&to=2026-03-11", ""]) {
      const rows = (await env.get(key, `/events/summary?${window}`)).body.data as {
        leads: number;
        sales: number;
        total_value: number;
      }[];
      const kpis = (await env.get(key, `/dashboard/kpis?${window}`)).body.data;
      assert.equal(
        rows.reduce((s, x) => s + x.leads, 0),
        kpis.leads,
        window,
      );
      assert.equal(
        rows.reduce((s, x) => s + x.sales, 0),
        kpis.total_sales,
        window,
      );
      assert.equal(Math.round(rows.reduce((s, x) => s + x.total_value, 0) * 100) / 100, kpis.revenue, window);
    }
  });

  test("empty window → []; malformed dates → 400", async () => {
    const { key } = await marchAccount();
    assert.deepEqual(await env.get(key, "/events/summary?from=2025-01-01&to=2025-01-02"), {
      status: 200,
      body: { data: [] },
    });
    assert.deepEqual(await env.get(key, "/events/summary?from=2026-03-02&to=2026-03-01"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});
