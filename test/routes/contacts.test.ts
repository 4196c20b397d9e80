import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { importKinds } from "../../src/import/kinds.ts";
import { purchaseRecordSchema } from "../../src/ingest/import-records.ts";
import { resolveContacts } from "../../src/queries/resolve-contacts.ts";
import { seedAccount, testSecrets, useTestApp } from "../helpers/harness.ts";
import { at, type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

// 12:00 UTC on 31 March 2026; in Paris (summer time since 29 March) it is 14:00 the same day.
const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

type Row = Record<string, unknown>;

const emails = (data: Row[]) => data.map((r) => r.email);
const ids = (data: Row[]) => data.map((r) => r.id);
const sorted = (values: unknown) => [...(values as string[])].sort();

const CONTACT_FIELDS = [
  "email",
  "total_events",
  "event_types",
  "first_event_date",
  "last_event_date",
  "name",
  "phone",
  "sources",
  "assigned_user_name",
  "value",
  "form_titles",
  "has_campaign",
  "tags",
  "form_response",
].sort();

const CUSTOMER_FIELDS = [
  "id",
  "contact_email",
  "contact_name",
  "contact_phone",
  "contact_id",
  "first_event_type",
  "first_event_date",
  "latest_lead_date",
  "first_payment_date",
  "commission_status",
  "commission_expires_at",
  "total_revenue",
  "total_purchases",
  "total_commission",
  "products",
  "created_at",
].sort();

const PURCHASE_FIELDS = [
  "id",
  "purchase_date",
  "product_key",
  "product_name",
  "contact_email",
  "contact_name",
  "amount",
  "commissionable",
  "commission_rate",
  "commission_amount",
  "invoice_id",
].sort();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function accountWith(fixture: Fixture, options: { timezone?: string } = {}) {
  const account = await seedAccount(env.db, options);
  await loadFixture(env.db, account.accountId, fixture);
  return { account, key: await account.key(["read:contacts"]) };
}

/**
 * Seven contacts whose last events straddle the window 10–20 March (UTC account), plus a contact
 * known only from a purchase. Newest last event first: later (25 Mar), next (21 Mar 00:00), end
 * (20 Mar 23:59:59), in (12 Mar), start (10 Mar 00:00), before (5 Mar), then buyer (no event).
 */
const timeline: Fixture = {
  events: [
    { id: "in-1", event_type: "lead", event_datetime: at("2026-03-05"), contact_email: "in@x.test" },
    { id: "in-2", event_type: "booking", event_datetime: at("2026-03-12"), contact_email: "in@x.test" },
    // An event inside the window, but the last one after `to`: out of 10–20 March.
    { id: "later-1", event_type: "lead", event_datetime: at("2026-03-12"), contact_email: "later@x.test" },
    { id: "later-2", event_type: "sale", event_datetime: at("2026-03-25"), contact_email: "later@x.test" },
    { id: "before-1", event_type: "lead", event_datetime: at("2026-03-05"), contact_email: "before@x.test" },
    {
      id: "start-1",
      event_type: "lead",
      event_datetime: "2026-03-10T00:00:00Z",
      contact_email: "start@x.test",
    },
    { id: "end-1", event_type: "lead", event_datetime: "2026-03-20T23:59:59Z", contact_email: "end@x.test" },
    {
      id: "next-1",
      event_type: "lead",
      event_datetime: "2026-03-21T00:00:00Z",
      contact_email: "next@x.test",
    },
  ],
  purchases: [
    {
      id: "buy-1",
      purchase_date: at("2026-03-15"),
      contact_email: "buyer@x.test",
      contact_name: "Pat Buyer",
      amount: 90,
    },
  ],
};

const timelineOrder = [
  "later@x.test",
  "next@x.test",
  "end@x.test",
  "in@x.test",
  "start@x.test",
  "before@x.test",
  "buyer@x.test",
];

describe("GET /contacts", () => {
  test("a row has exactly the spec's fields; one contact's figures worked out by hand", async () => {
    const { key } = await accountWith({
      events: [
        {
          id: "a-l1",
          event_type: "lead",
          event_datetime: at("2026-03-02"),
          contact_email: "  Ann.Lee@X.test ",
          contact_name: "Ann Lee",
          contact_phone: "+33 6 00 00 00 01",
        },
        {
          id: "a-l2",
          event_type: "lead",
          event_datetime: at("2026-03-04"),
          contact_email: "ann.lee@x.test",
          utm_source: "facebook",
        },
        {
          id: "a-ap",
          event_type: "application",
          event_datetime: at("2026-03-06"),
          contact_email: "ann.lee@x.test",
          utm_source: "google",
          utm_campaign: "Spring",
        },
        {
          id: "a-s1",
          event_type: "sale",
          event_datetime: at("2026-03-11", "16:45:30"),
          contact_email: "ann.lee@x.test",
          amount: 100,
          utm_source: "facebook",
        },
        // has_campaign from campaign_name alone, from utm_campaign_id alone; not from a blank campaign.
        {
          id: "b-bk",
          event_type: "booking",
          event_datetime: at("2026-03-09"),
          contact_email: "bob@x.test",
          campaign_name: "Spring",
        },
        {
          id: "c-l1",
          event_type: "lead",
          event_datetime: at("2026-03-08"),
          contact_email: "cat@x.test",
          utm_campaign_id: "120000000000000001",
        },
        {
          id: "d-l1",
          event_type: "lead",
          event_datetime: at("2026-03-07"),
          contact_email: "dan@x.test",
          utm_source: "newsletter",
          utm_campaign: "   ",
        },
      ],
      purchases: [
        {
          id: "pat-1",
          purchase_date: at("2026-03-20"),
          contact_email: "pat@x.test",
          contact_name: "Pat Buyer",
          amount: 50,
        },
      ],
    });
    const r = await env.get(key, "/contacts");
    assert.equal(r.status, 200);
    const data = r.body.data as Row[];
    assert.deepEqual(emails(data), [
      "ann.lee@x.test",
      "bob@x.test",
      "cat@x.test",
      "dan@x.test",
      "pat@x.test",
    ]);
    for (const row of data) assert.deepEqual(Object.keys(row).sort(), CONTACT_FIELDS);

    const [ann, bob, cat, dan, pat] = data;
    // The spec does not order `sources`: compared as a set.
    assert.deepEqual(sorted(ann?.sources), ["facebook", "google"]);
    assert.deepEqual(
      { ...ann, sources: null },
      {
        email: "ann.lee@x.test",
        total_events: 4,
        event_types: ["application", "lead", "sale"],
        first_event_date: "2026-03-02T10:00:00.000Z",
        last_event_date: "2026-03-11T16:45:30.000Z",
        name: "Ann Lee",
        phone: "+33600000001",
        sources: null,
        // Not set by the import (contact-level CRM fields): their empty values.
        assigned_user_name: null,
        value: null,
        form_titles: [],
        has_campaign: true,
        tags: [],
        form_response: null,
      },
    );
    assert.deepEqual(
      [bob, cat, dan].map((c) => [c?.email, c?.total_events, c?.event_types, c?.sources, c?.has_campaign]),
      [
        ["bob@x.test", 1, ["booking"], [], true],
        ["cat@x.test", 1, ["lead"], [], true],
        ["dan@x.test", 1, ["lead"], ["newsletter"], false],
      ],
    );
    // Known from a purchase only: listed, with no event.
    assert.deepEqual(pat, {
      email: "pat@x.test",
      total_events: 0,
      event_types: [],
      first_event_date: null,
      last_event_date: null,
      name: "Pat Buyer",
      phone: null,
      sources: [],
      assigned_user_name: null,
      value: null,
      form_titles: [],
      has_campaign: false,
      tags: [],
      form_response: null,
    });
  });

  test("order: most recent last CRM event first, contacts without events last", async () => {
    const { key } = await accountWith(timeline);
    const r = await env.get(key, "/contacts");
    assert.equal(r.status, 200);
    assert.deepEqual(emails(r.body.data), timelineOrder);
    assert.deepEqual(
      (r.body.data as Row[]).map((c) => c.last_event_date),
      [
        "2026-03-25T10:00:00.000Z",
        "2026-03-21T00:00:00.000Z",
        "2026-03-20T23:59:59.000Z",
        "2026-03-12T10:00:00.000Z",
        "2026-03-10T00:00:00.000Z",
        "2026-03-05T10:00:00.000Z",
        null,
      ],
    );
  });

  test("from/to keep the contacts whose last event falls in the window (inclusive days)", async () => {
    const { key } = await accountWith(timeline);
    const window = await env.get(key, "/contacts?from=2026-03-10&to=2026-03-20");
    assert.equal(window.status, 200);
    // later@ has an event on 12 March but its last one is after `to`; buyer@ has no event at all.
    assert.deepEqual(emails(window.body.data), ["end@x.test", "in@x.test", "start@x.test"]);
    // Counts stay the contact's own, not the window's.
    assert.deepEqual(
      (window.body.data as Row[]).map((c) => c.total_events),
      [1, 2, 1],
    );
    assert.deepEqual(emails((await env.get(key, "/contacts?from=2026-03-21&to=2026-03-21")).body.data), [
      "next@x.test",
    ]);
    assert.deepEqual(emails((await env.get(key, "/contacts?from=2026-03-26&to=2026-03-31")).body.data), []);
    // `from` alone: up to today.
    assert.deepEqual(emails((await env.get(key, "/contacts?from=2026-03-21")).body.data), [
      "later@x.test",
      "next@x.test",
    ]);
  });

  test("search: a fragment of email, name or phone, any case; % and _ taken literally", async () => {
    const { key } = await accountWith({
      events: [
        {
          id: "s1",
          event_type: "lead",
          event_datetime: at("2026-03-05"),
          contact_email: "ann.lee@x.test",
          contact_name: "Ann Lee",
        },
        {
          id: "s2",
          event_type: "lead",
          event_datetime: at("2026-03-06"),
          contact_email: "bob@x.test",
          contact_phone: "+33 6 12 34 56 78",
        },
        // A contact known by phone only.
        {
          id: "s3",
          event_type: "lead",
          event_datetime: at("2026-03-07"),
          contact_phone: "06 99 88 77 66",
          contact_name: "Phoebe",
        },
        {
          id: "s4",
          event_type: "lead",
          event_datetime: at("2026-03-08"),
          contact_email: "first_last@x.test",
          contact_name: "Zed",
        },
        {
          id: "s5",
          event_type: "lead",
          event_datetime: at("2026-03-09"),
          contact_email: "promo@x.test",
          contact_name: "Promo 50% Off",
        },
        {
          id: "s6",
          event_type: "lead",
          event_datetime: at("2026-03-10"),
          contact_email: "carl@example.org",
          contact_name: "Carl Annex",
        },
        {
          id: "s7",
          event_type: "lead",
          event_datetime: at("2026-03-11"),
          contact_email: "e.f@x.test",
          contact_name: "Élodie Fournier",
        },
      ],
    });
    const search = async (q: string, extra = "") => {
      const r = await env.get(key, `/contacts?search=${encodeURIComponent(q)}${extra}`);
      assert.equal(r.status, 200, q);
      return r.body.data as Row[];
    };
    // Name (Carl Annex) and email/name (ann.lee), most recent first.
    assert.deepEqual(emails(await search("ANN")), ["carl@example.org", "ann.lee@x.test"]);
    assert.deepEqual(emails(await search("Example.ORG")), ["carl@example.org"]);
    assert.deepEqual(emails(await search("lee@X")), ["ann.lee@x.test"]);
    assert.deepEqual(emails(await search("12345")), ["bob@x.test"]);
    const byPhone = await search("99887");
    assert.deepEqual(
      byPhone.map((c) => [c.email, c.name, c.phone]),
      [[null, "Phoebe", "0699887766"]],
    );
    assert.deepEqual(emails(await search("phoe")), [null]);
    // Wildcards are ordinary characters: `%` and `_` would otherwise match every contact.
    assert.deepEqual(emails(await search("%")), ["promo@x.test"]);
    assert.deepEqual(emails(await search("50%")), ["promo@x.test"]);
    assert.deepEqual(emails(await search("_")), ["first_last@x.test"]);
    assert.deepEqual(emails(await search("t_l")), ["first_last@x.test"]);
    assert.deepEqual(emails(await search("a_n")), []);
    assert.deepEqual(emails(await search("\\")), []);
    assert.deepEqual(emails(await search("  bob  ")), ["bob@x.test"]);
    assert.deepEqual(emails(await search("nobody")), []);
    // Case folds beyond ASCII; a fragment never runs from one field into the next.
    assert.deepEqual(emails(await search("ÉLODIE fOURNIER")), ["e.f@x.test"]);
    assert.deepEqual(emails(await search("test élodie")), []);
    assert.deepEqual(emails(await search("test\nélodie")), []);
    // With a window: both conditions.
    assert.deepEqual(emails(await search("ann", "&from=2026-03-10&to=2026-03-10")), ["carl@example.org"]);
    assert.deepEqual(await env.get(key, "/contacts?search="), {
      status: 400,
      body: { error: "search: must not be empty" },
    });
    const tooLong = await env.get(key, `/contacts?search=${"a".repeat(201)}`);
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body.error, /^search: /);
  });

  test("limit: default 100, clamped to 500; malformed parameters → 400", async () => {
    // 501 contacts, one lead each, a minute apart: p500 is the most recent.
    const name = (i: number) => `p${String(i).padStart(3, "0")}@x.test`;
    const events = Array.from({ length: 501 }, (_, i) => ({
      id: `lead-${i}`,
      event_type: "lead",
      event_datetime: new Date(Date.parse("2026-03-01T00:00:00Z") + i * 60_000).toISOString(),
      contact_email: name(i),
    }));
    const { key } = await accountWith({ events });
    const byDefault = (await env.get(key, "/contacts")).body.data as Row[];
    assert.equal(byDefault.length, 100);
    assert.deepEqual([byDefault[0]?.email, byDefault[99]?.email], [name(500), name(401)]);
    const clamped = (await env.get(key, "/contacts?limit=1000")).body.data as Row[];
    assert.equal(clamped.length, 500);
    assert.deepEqual([clamped[0]?.email, clamped[499]?.email], [name(500), name(1)]);
    assert.deepEqual(emails((await env.get(key, "/contacts?limit=1000&offset=500")).body.data), [name(0)]);
    assert.deepEqual(emails((await env.get(key, "/contacts?limit=3&offset=10")).body.data), [
      name(490),
      name(489),
      name(488),
    ]);
    assert.deepEqual((await env.get(key, "/contacts?offset=501")).body.data, []);

    const refused: [string, string][] = [
      ["limit=0", "limit: must be at least 1"],
      ["limit=-5", "limit: must be at least 1"],
      ["limit=abc", "limit: must be an integer"],
      ["limit=2.5", "limit: must be an integer"],
      ["offset=-1", "offset: must be at least 0"],
      ["offset=x", "offset: must be an integer"],
      // Beyond a safe integer: refused, not a database overflow (it was a 502).
      ["offset=99999999999999999999", "offset: is too large"],
      ["from=2026-03-21&to=2026-03-20", "from: must not be after to"],
      ["from=2026-3-1", "from: must be a date YYYY-MM-DD"],
      ["to=2026-02-30", "to: is not a calendar date"],
      ["from=yesterday", "from: must be a date YYYY-MM-DD"],
    ];
    for (const [query, error] of refused) {
      assert.deepEqual(await env.get(key, `/contacts?${query}`), { status: 400, body: { error } }, query);
    }
  });

  test("paging: walking limit 2 by offset yields every contact once, in the one-page order", async () => {
    const { key } = await accountWith(timeline);
    const pages: unknown[][] = [];
    for (let offset = 0; offset <= 8; offset += 2) {
      const r = await env.get(key, `/contacts?limit=2&offset=${offset}`);
      assert.equal(r.status, 200);
      pages.push(emails(r.body.data));
    }
    assert.deepEqual(pages, [
      ["later@x.test", "next@x.test"],
      ["end@x.test", "in@x.test"],
      ["start@x.test", "before@x.test"],
      ["buyer@x.test"],
      [],
    ]);
    assert.deepEqual(pages.flat(), timelineOrder);
    // Within a window too.
    const windowed: unknown[] = [];
    for (let offset = 0; offset < 4; offset += 2) {
      windowed.push(
        ...emails(
          (await env.get(key, `/contacts?from=2026-03-10&to=2026-03-20&limit=2&offset=${offset}`)).body.data,
        ),
      );
    }
    assert.deepEqual(windowed, ["end@x.test", "in@x.test", "start@x.test"]);
  });

  test("another account's contacts never appear, even under the same email", async () => {
    const { key } = await accountWith({
      events: [
        { id: "mine", event_type: "lead", event_datetime: at("2026-03-05"), contact_email: "ann@x.test" },
      ],
    });
    await accountWith({
      events: [
        { id: "theirs-1", event_type: "lead", event_datetime: at("2026-03-20"), contact_email: "ann@x.test" },
        { id: "theirs-2", event_type: "sale", event_datetime: at("2026-03-21"), contact_email: "ann@x.test" },
        { id: "theirs-3", event_type: "lead", event_datetime: at("2026-03-22"), contact_email: "zoe@x.test" },
      ],
      purchases: [
        { id: "theirs-p", purchase_date: at("2026-03-22"), contact_email: "yan@x.test", amount: 10 },
      ],
    });
    const mine = (await env.get(key, "/contacts?limit=500")).body.data as Row[];
    assert.deepEqual(
      mine.map((c) => [c.email, c.total_events, c.event_types, c.last_event_date]),
      [["ann@x.test", 1, ["lead"], "2026-03-05T10:00:00.000Z"]],
    );
    assert.deepEqual((await env.get(key, "/contacts?search=zoe")).body.data, []);
    assert.deepEqual((await env.get(key, "/contacts?from=2026-03-20&to=2026-03-31")).body.data, []);
  });
});

describe("values the imports leave to the reads", () => {
  test("a contact's rep is its own, else that of its latest event naming one", async () => {
    const { key } = await accountWith({
      events: [
        {
          id: "r1",
          event_type: "lead",
          event_datetime: "2026-03-02T10:00:00Z",
          contact_email: "rae@x.test",
          assigned_user_name: "Alice Rep",
        },
        {
          id: "r2",
          event_type: "booking",
          event_datetime: "2026-03-04T10:00:00Z",
          contact_email: "rae@x.test",
          assigned_user_name: "Bob Rep",
        },
        {
          id: "r3",
          event_type: "no_show",
          event_datetime: "2026-03-06T10:00:00Z",
          contact_email: "rae@x.test",
        },
      ],
    });
    const [row] = (await env.get(key, "/contacts")).body.data;
    assert.equal(row.assigned_user_name, "Bob Rep");
  });

  test("customers: commissions as finance counts them, one name per product; purchases show the contact's email", async () => {
    const { key } = await accountWith({
      purchases: [
        // Not commissionable: its amount does not count.
        {
          id: "p1",
          purchase_date: "2026-03-05T10:00:00Z",
          contact_email: "  Cara@X.Test ",
          product_key: "coaching",
          amount: 300,
          commissionable: false,
          commission_amount: 30,
        },
        // Commissionable without an amount: amount × rate = 20.
        {
          id: "p2",
          purchase_date: "2026-03-06T10:00:00Z",
          contact_email: "cara@x.test",
          product_key: "coaching",
          product_name: "Coaching",
          amount: 200,
          commissionable: true,
          commission_rate: 0.1,
        },
        {
          id: "p3",
          purchase_date: "2026-03-07T10:00:00Z",
          contact_email: "cara@x.test",
          product_name: "Ebook",
          amount: 20,
          commissionable: true,
          commission_amount: 2.5,
        },
      ],
    });
    const [customer] = (await env.get(key, "/contacts/customers")).body.data;
    assert.equal(customer.total_commission, 22.5);
    assert.equal(customer.total_revenue, 520);
    assert.deepEqual(customer.products, ["Coaching", "Ebook"]);
    const purchases = (await env.get(key, "/contacts/purchases")).body.data;
    assert.deepEqual(
      purchases.map((p: { contact_email: string }) => p.contact_email),
      ["cara@x.test", "cara@x.test", "cara@x.test"],
    );
  });
});

describe("GET /contacts/customers", () => {
  test("a customer lists its contact's email, name and phone, also a name and phone it gets later", async () => {
    const { account, key: readKey } = await accountWith({
      purchases: [
        { id: "p-dee", purchase_date: "2026-03-10T10:00:00Z", contact_email: "Dee@X.test", amount: 5 },
      ],
    });
    const contactOf = async () => {
      const [row] = (await env.get(readKey, "/contacts/customers")).body.data as Row[];
      return [row?.contact_email, row?.contact_name, row?.contact_phone];
    };
    assert.deepEqual(await contactOf(), ["dee@x.test", null, null]);
    // A form on a landing page gives the contact a name and a phone (collect resolves the contact and
    // writes a touchpoint, no event or purchase): the customer row shows them from then on.
    await env.db.tenant(account.accountId, (tx) =>
      resolveContacts(tx, account.accountId, {
        facts: [
          {
            key: { kind: "email", key: "dee@x.test" },
            email: "dee@x.test",
            phone: "+33655443322",
            name: "Dee Later",
          },
        ],
      }),
    );
    assert.deepEqual(await contactOf(), ["dee@x.test", "Dee Later", "+33655443322"]);
  });

  test("a customer's totals and first events, worked out by hand; newest customer first", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      events: [
        {
          id: "c-l1",
          event_type: "lead",
          event_datetime: at("2026-02-01"),
          contact_email: "cara@x.test",
          contact_name: "Cara Diaz",
          contact_phone: "+33 7 11 22 33 44",
        },
        // At the first lead's instant: the smaller id comes first.
        {
          id: "c-ap",
          event_type: "application",
          event_datetime: at("2026-02-01"),
          contact_email: "cara@x.test",
        },
        {
          id: "c-l2",
          event_type: "lead",
          event_datetime: at("2026-02-20", "08:15:00"),
          contact_email: "cara@x.test",
        },
        {
          id: "c-bk",
          event_type: "booking",
          event_datetime: at("2026-02-25"),
          contact_email: "cara@x.test",
          booking_date: "2026-03-01",
        },
        // A contact with events and no purchase is not a customer.
        { id: "e-l1", event_type: "lead", event_datetime: at("2026-02-02"), contact_email: "eve@x.test" },
      ],
      purchases: [
        {
          id: "cara-1",
          purchase_date: "2026-03-10T09:00:00Z",
          contact_email: "cara@x.test",
          product_key: "coaching",
          product_name: "Coaching Program",
          amount: 1000,
          commissionable: true,
          commission_rate: 0.1,
          commission_amount: 100,
          invoice_id: "INV-1",
          commission_status: "active",
          commission_expires_at: "2026-09-10T00:00:00Z",
        },
        // No terms given: the customer keeps those of the first purchase.
        {
          id: "cara-2",
          purchase_date: "2026-03-20T15:30:00Z",
          contact_email: "cara@x.test",
          product_key: "audit",
          amount: 250.5,
        },
      ],
    });
    // A later transaction: a newer customer.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await loadFixture(env.db, account.accountId, {
      purchases: [
        {
          id: "dora-1",
          purchase_date: "2026-03-15T12:00:00Z",
          contact_email: "dora@x.test",
          contact_name: "Dora Ng",
          product_key: "coaching",
          product_name: "Coaching Program",
          amount: 500,
        },
        {
          id: "dora-2",
          purchase_date: "2026-03-25T12:00:00Z",
          contact_email: "dora@x.test",
          product_key: "coaching",
          product_name: "Coaching Program",
          amount: 499.99,
        },
      ],
    });
    const key = await account.key(["read:contacts"]);
    const r = await env.get(key, "/contacts/customers");
    assert.equal(r.status, 200);
    const data = r.body.data as Row[];
    assert.deepEqual(
      data.map((c) => c.contact_email),
      ["dora@x.test", "cara@x.test"],
    );
    for (const row of data) {
      assert.deepEqual(Object.keys(row).sort(), CUSTOMER_FIELDS);
      assert.match(String(row.id), UUID);
      assert.match(String(row.contact_id), UUID);
      assert.match(String(row.created_at), ISO_MS);
    }
    const [dora, cara] = data;
    assert.notEqual(dora?.contact_id, cara?.contact_id);
    assert.ok(String(dora?.created_at) > String(cara?.created_at), "newest first");
    // The spec does not order `products`: compared as a set.
    assert.deepEqual(sorted(cara?.products), ["Coaching Program", "audit"]);
    assert.deepEqual(
      { ...cara, id: null, contact_id: null, created_at: null, products: null },
      {
        id: null,
        contact_email: "cara@x.test",
        contact_name: "Cara Diaz",
        contact_phone: "+33711223344",
        contact_id: null,
        first_event_type: "application",
        first_event_date: "2026-02-01T10:00:00.000Z",
        latest_lead_date: "2026-02-20T08:15:00.000Z",
        first_payment_date: "2026-03-10T09:00:00.000Z",
        commission_status: "active",
        commission_expires_at: "2026-09-10T00:00:00.000Z",
        total_revenue: 1250.5,
        total_purchases: 2,
        total_commission: 100,
        products: null,
        created_at: null,
      },
    );
    // No events: the event fields are null; two purchases of one product name it once.
    assert.deepEqual(
      { ...dora, id: null, contact_id: null, created_at: null },
      {
        id: null,
        contact_email: "dora@x.test",
        contact_name: "Dora Ng",
        contact_phone: null,
        contact_id: null,
        first_event_type: null,
        first_event_date: null,
        latest_lead_date: null,
        first_payment_date: "2026-03-15T12:00:00.000Z",
        commission_status: null,
        commission_expires_at: null,
        total_revenue: 999.99,
        total_purchases: 2,
        total_commission: 0,
        products: ["Coaching Program"],
        created_at: null,
      },
    );
  });

  test("no purchase, no customer; another account's customers never appear", async () => {
    const { key } = await accountWith({
      events: [
        { id: "l1", event_type: "lead", event_datetime: at("2026-03-02"), contact_email: "ann@x.test" },
      ],
    });
    await accountWith({
      purchases: [{ id: "x-1", purchase_date: at("2026-03-02"), contact_email: "ann@x.test", amount: 10 }],
    });
    assert.deepEqual(await env.get(key, "/contacts/customers"), { status: 200, body: { data: [] } });
  });
});

describe("GET /contacts/purchases", () => {
  /** UTC account: the default window is 2 to 31 March, i.e. [2026-03-02T00:00Z, 2026-04-01T00:00Z). */
  const purchases: Fixture = {
    events: [
      {
        id: "ed-l1",
        event_type: "lead",
        event_datetime: at("2026-03-01"),
        contact_email: "ed@x.test",
        contact_name: "Ed Events",
      },
    ],
    purchases: [
      { id: "p-old", purchase_date: "2026-03-01T23:59:59Z", contact_email: "old@x.test", amount: 10 },
      { id: "p-first", purchase_date: "2026-03-02T00:00:00Z", contact_email: "first@x.test", amount: 99 },
      {
        id: "p-mid",
        purchase_date: "2026-03-15T08:30:00Z",
        contact_email: "cara@x.test",
        contact_name: "Cara Diaz",
        product_key: "coaching",
        product_name: "Coaching Program",
        amount: 1234.56,
        commissionable: true,
        commission_rate: 0.125,
        commission_amount: 154.32,
        invoice_id: "INV-42",
      },
      // No contact_name on the purchase: the contact's.
      {
        id: "p-ed",
        purchase_date: "2026-03-20T12:00:00Z",
        contact_email: "ed@x.test",
        product_key: "audit",
        amount: -40.5,
      },
      // Later today than the clock, but today.
      { id: "p-last", purchase_date: "2026-03-31T23:59:59Z", contact_email: "last@x.test", amount: 1 },
      { id: "p-next", purchase_date: "2026-04-01T00:00:00Z", contact_email: "next@x.test", amount: 2 },
    ],
  };

  test("the spec's fields, money as numbers, newest first, default window the last 30 days", async () => {
    const { key } = await accountWith(purchases);
    const r = await env.get(key, "/contacts/purchases");
    assert.equal(r.status, 200);
    const data = r.body.data as Row[];
    assert.deepEqual(ids(data), ["p-last", "p-ed", "p-mid", "p-first"]);
    for (const row of data) assert.deepEqual(Object.keys(row).sort(), PURCHASE_FIELDS);
    assert.deepEqual(data[2], {
      id: "p-mid",
      purchase_date: "2026-03-15T08:30:00.000Z",
      product_key: "coaching",
      product_name: "Coaching Program",
      contact_email: "cara@x.test",
      contact_name: "Cara Diaz",
      amount: 1234.56,
      commissionable: true,
      commission_rate: 0.125,
      commission_amount: 154.32,
      invoice_id: "INV-42",
    });
    assert.deepEqual(data[1], {
      id: "p-ed",
      purchase_date: "2026-03-20T12:00:00.000Z",
      product_key: "audit",
      product_name: null,
      contact_email: "ed@x.test",
      contact_name: "Ed Events",
      amount: -40.5,
      commissionable: false,
      commission_rate: null,
      commission_amount: null,
      invoice_id: null,
    });
    assert.deepEqual(
      data.map((p) => [p.purchase_date, p.amount]),
      [
        ["2026-03-31T23:59:59.000Z", 1],
        ["2026-03-20T12:00:00.000Z", -40.5],
        ["2026-03-15T08:30:00.000Z", 1234.56],
        ["2026-03-02T00:00:00.000Z", 99],
      ],
    );
  });

  test("a purchase without a name lists its contact's, also one given later; its own name wins; re-sent unchanged", async () => {
    const { account, key } = await accountWith({
      events: [
        {
          id: "bo-l1",
          event_type: "lead",
          event_datetime: at("2026-03-03"),
          contact_email: "bo@x.test",
          contact_name: "Bo From The Lead",
        },
      ],
      purchases: [
        { id: "p-ann", purchase_date: "2026-03-10T10:00:00Z", contact_email: " Ann@X.test", amount: 5 },
        {
          id: "p-bo",
          purchase_date: "2026-03-11T10:00:00Z",
          contact_email: "bo@x.test",
          contact_name: "Bo On The Invoice",
          amount: 6,
        },
        { id: "p-bo2", purchase_date: "2026-03-12T10:00:00Z", contact_email: "bo@x.test", amount: 7 },
      ],
    });
    const listed = async () =>
      Object.fromEntries(
        ((await env.get(key, "/contacts/purchases")).body.data as Row[]).map((p) => [
          p.id,
          [p.contact_email, p.contact_name],
        ]),
      );
    assert.deepEqual(await listed(), {
      "p-ann": ["ann@x.test", null],
      "p-bo": ["bo@x.test", "Bo On The Invoice"],
      "p-bo2": ["bo@x.test", "Bo From The Lead"],
    });
    // A later lead gives Ann's contact a name: her purchase without one lists it from then on.
    await loadFixture(env.db, account.accountId, {
      events: [
        {
          id: "ann-l1",
          event_type: "lead",
          event_datetime: at("2026-03-13"),
          contact_email: "ann@x.test",
          contact_name: "Ann Later",
        },
      ],
    });
    assert.deepEqual((await listed())["p-ann"], ["ann@x.test", "Ann Later"]);
    // The same purchase sent again is unchanged (it still has no name of its own) ...
    const resend = (record: Record<string, unknown>) =>
      env.db.tenant(account.accountId, (tx) =>
        importKinds.purchases.write(tx, account.accountId, [purchaseRecordSchema.parse(record)], {
          secrets: testSecrets,
        }),
      );
    const ann = {
      id: "p-ann",
      purchase_date: "2026-03-10T10:00:00Z",
      contact_email: "ann@x.test",
      amount: 5,
    };
    assert.deepEqual(await resend(ann), { imported: 0, updated: 0, skipped: 1 });
    // ... and moved to another contact, it lists that contact's.
    assert.deepEqual(await resend({ ...ann, contact_email: "bo@x.test" }), {
      imported: 0,
      updated: 1,
      skipped: 0,
    });
    assert.deepEqual((await listed())["p-ann"], ["bo@x.test", "Bo From The Lead"]);
  });

  test("from/to are inclusive days; malformed windows → 400; other accounts never appear", async () => {
    const { key } = await accountWith(purchases);
    await accountWith({
      purchases: [
        { id: "theirs", purchase_date: "2026-03-15T09:00:00Z", contact_email: "cara@x.test", amount: 7 },
      ],
    });
    const window = async (q: string) => {
      const r = await env.get(key, `/contacts/purchases?${q}`);
      assert.equal(r.status, 200, q);
      return ids(r.body.data);
    };
    assert.deepEqual(await window("from=2026-03-15&to=2026-03-15"), ["p-mid"]);
    assert.deepEqual(await window("from=2026-03-01&to=2026-03-01"), ["p-old"]);
    assert.deepEqual(await window("from=2026-03-01&to=2026-03-02"), ["p-first", "p-old"]);
    assert.deepEqual(await window("from=2026-02-01&to=2026-04-30"), [
      "p-next",
      "p-last",
      "p-ed",
      "p-mid",
      "p-first",
      "p-old",
    ]);
    // `from` after today: the window is that day.
    assert.deepEqual(await window("from=2026-04-01"), ["p-next"]);
    assert.deepEqual(await window("from=2026-03-16&to=2026-03-19"), []);
    assert.deepEqual(await env.get(key, "/contacts/purchases?from=2026-03-20&to=2026-03-19"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
    assert.deepEqual(await env.get(key, "/contacts/purchases?to=2026-13-01"), {
      status: 400,
      body: { error: "to: is not a calendar date" },
    });
    assert.deepEqual(await env.get(key, "/contacts/purchases?from=15/03/2026"), {
      status: 400,
      body: { error: "from: must be a date YYYY-MM-DD" },
    });
  });

  test("days are the account's: in Paris, 00:30 local on 10 March is the 10th", async () => {
    // Paris is UTC+1 until 29 March, UTC+2 after.
    const parisPurchases: Fixture = {
      purchases: [
        // 2 March 00:30 in Paris: the first day of the default window (2–31 March).
        { id: "fr-edge", purchase_date: "2026-03-01T23:30:00Z", contact_email: "a@x.test", amount: 1 },
        { id: "fr-before", purchase_date: "2026-03-09T22:59:59Z", contact_email: "a@x.test", amount: 2 },
        { id: "fr-midnight", purchase_date: "2026-03-09T23:00:00Z", contact_email: "a@x.test", amount: 3 },
        { id: "fr-after", purchase_date: "2026-03-09T23:30:00Z", contact_email: "a@x.test", amount: 4 },
        { id: "fr-late", purchase_date: "2026-03-10T22:59:59Z", contact_email: "a@x.test", amount: 5 },
        { id: "fr-next", purchase_date: "2026-03-10T23:00:00Z", contact_email: "a@x.test", amount: 6 },
        // 1 April 00:30 in Paris (summer time): after today.
        { id: "fr-april", purchase_date: "2026-03-31T22:30:00Z", contact_email: "a@x.test", amount: 7 },
      ],
    };
    const paris = await accountWith(parisPurchases, { timezone: "Europe/Paris" });
    const utc = await accountWith(parisPurchases);
    const get = async (key: string, q: string) =>
      ids((await env.get(key, `/contacts/purchases?${q}`)).body.data);
    assert.deepEqual(await get(paris.key, "from=2026-03-10&to=2026-03-10"), [
      "fr-late",
      "fr-after",
      "fr-midnight",
    ]);
    assert.deepEqual(await get(paris.key, "from=2026-03-09&to=2026-03-09"), ["fr-before"]);
    assert.deepEqual(await get(paris.key, "from=2026-03-11&to=2026-03-11"), ["fr-next"]);
    // The same purchases in a UTC account: 23:00 and 23:30 UTC are still the 9th.
    assert.deepEqual(await get(utc.key, "from=2026-03-10&to=2026-03-10"), ["fr-next", "fr-late"]);
    assert.deepEqual(await get(utc.key, "from=2026-03-09&to=2026-03-09"), [
      "fr-after",
      "fr-midnight",
      "fr-before",
    ]);
    // Default window, Paris days: 2 March 00:00 (23:00 UTC on the 1st) to 1 April 00:00 (22:00 UTC).
    assert.deepEqual(await get(paris.key, ""), [
      "fr-next",
      "fr-late",
      "fr-after",
      "fr-midnight",
      "fr-before",
      "fr-edge",
    ]);
    assert.deepEqual(await get(utc.key, ""), [
      "fr-april",
      "fr-next",
      "fr-late",
      "fr-after",
      "fr-midnight",
      "fr-before",
    ]);
    // Returned instants stay UTC.
    const midnight = (
      (await env.get(paris.key, "/contacts/purchases?from=2026-03-10&to=2026-03-10")).body.data as Row[]
    )[2];
    assert.equal(midnight?.purchase_date, "2026-03-09T23:00:00.000Z");
  });
});
