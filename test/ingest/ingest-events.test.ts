import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { type CrmEvent, crmEventSchema } from "../../src/ingest/crm-event.ts";
import { ingestCrmEvents } from "../../src/ingest/ingest-events.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const event = (over: Partial<CrmEvent> & { id: string }): CrmEvent =>
  crmEventSchema.parse({ event_type: "lead", event_datetime: "2026-02-01T10:00:00Z", ...over });

const ingest = (accountId: string, list: CrmEvent[]) =>
  db.tenant(accountId, (tx) => ingestCrmEvents(tx, accountId, list, { origin: "webhook" }));

const select = <T>(accountId: string, query: ReturnType<typeof sql>) =>
  db.admin(accountId, (tx) => rows<T>(tx, query));

/** Dan's purchase of product p: a sale, and a paid installment two days later. */
const dansSale = (over: Partial<CrmEvent> & { id: string }) =>
  event({ event_type: "sale", contact_email: "dan@example.com", product_key: "p", amount: 3000, ...over });
const dansPayment = (over: Partial<CrmEvent> = {}) =>
  dansSale({
    id: "p1",
    event_type: "payment",
    payment_status: "paid",
    amount: 1000,
    event_datetime: "2026-02-03T10:00:00Z",
    ...over,
  });

const saleCounts = (accountId: string) =>
  select<{
    id: string;
    counted: boolean | null;
    drop_reason: string | null;
    group_key: string | null;
    group_revenue: string | null;
  }>(
    accountId,
    sql`select id, counted, drop_reason, group_key, group_revenue::text from events
        where account_id = ${accountId} order by event_datetime, id`,
  );

describe("event ingestion", () => {
  test("validation: platform ids must be strings, dates need a zone, unknown fields are ignored", () => {
    const bad = crmEventSchema.safeParse({
      id: "e",
      event_type: "lead",
      event_datetime: "2026-02-01T10:00:00",
      // What a JSON number of an 18-digit id becomes: it has already lost its last digits.
      meta_ad_id: JSON.parse("120210000000000001"),
    });
    assert.equal(bad.success, false);
    const paths = bad.success ? [] : bad.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).sort();
    assert.deepEqual(paths, [
      "event_datetime: must be an ISO 8601 date-time with a time zone",
      "meta_ad_id: must be a string (platform ids exceed 2^53 as numbers)",
    ]);
    const ok = crmEventSchema.parse({
      id: "e",
      event_type: "lead",
      event_datetime: "2026-02-01T10:00:00+01:00",
      crm_extra: 1,
    });
    assert.equal("crm_extra" in ok, false);
  });

  test("stored once: a replay writes nothing, a change replaces it", async () => {
    const { accountId: a } = await seedAccount(db);
    const first = event({ id: "lead-1", contact_email: " Ann@Example.COM ", contact_name: "Ann" });
    assert.deepEqual(await ingest(a, [first]), { inserted: 1, updated: 0, unchanged: 0 });
    assert.deepEqual(await ingest(a, [first]), { inserted: 0, updated: 0, unchanged: 1 });
    assert.deepEqual(await ingest(a, [{ ...first, contact_name: "Ann Smith" }]), {
      inserted: 0,
      updated: 1,
      unchanged: 0,
    });
    const stored = await select<{ id: string; contact_email: string; contact_name: string; origin: string }>(
      a,
      sql`select id, contact_email, contact_name, origin from events where account_id = ${a}`,
    );
    assert.deepEqual(stored, [
      { id: "lead-1", contact_email: "ann@example.com", contact_name: "Ann Smith", origin: "webhook" },
    ]);
    const touches = await select<{ kind: string; event_id: string; external_id: string }>(
      a,
      sql`select kind, event_id, external_id from touchpoints where account_id = ${a}`,
    );
    assert.deepEqual(touches, [{ kind: "conversion", event_id: "lead-1", external_id: "event:lead-1" }]);
  });

  test("identity: one contact per normalized email, phone as the fallback", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [
      event({ id: "1", contact_email: "Bob@Example.com", contact_name: "Bob" }),
      event({ id: "2", contact_email: " bob@example.com", contact_phone: "+33 6 12 34 56 78" }),
      event({ id: "3", contact_phone: "+33 6 99 99 99 99" }),
      event({ id: "4", contact_phone: "+33699999999" }),
      event({ id: "5" }),
    ]);
    const contacts = await select<{ email: string | null; phone: string | null; name: string | null }>(
      a,
      sql`select email, phone, name from contacts where account_id = ${a} order by email nulls last`,
    );
    assert.deepEqual(contacts, [
      { email: "bob@example.com", phone: "+33612345678", name: "Bob" },
      { email: null, phone: "+33699999999", name: null },
    ]);
    const links = await select<{ id: string; same_as_first: boolean | null }>(
      a,
      sql`select id, contact_id = (select contact_id from events where account_id = ${a} and id = '1') as same_as_first
          from events where account_id = ${a} order by id`,
    );
    assert.deepEqual(links, [
      { id: "1", same_as_first: true },
      { id: "2", same_as_first: true },
      { id: "3", same_as_first: false },
      { id: "4", same_as_first: false },
      { id: "5", same_as_first: null },
    ]);
  });

  test("enrichment: a conversion without UTMs inherits the channel of the last visit and the ad of the last ad click", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [
      event({ id: "seed", contact_email: "cat@example.com", event_datetime: "2026-01-01T00:00:00Z" }),
    ]);
    const [contact] = await select<{ id: string }>(a, sql`select id from contacts where account_id = ${a}`);
    const web = (at: string, utm: object, adIds: object, paid: boolean) =>
      db.admin(a, (tx) =>
        tx.execute(sql`
          insert into touchpoints (account_id, id, contact_id, kind, event_type, occurred_at, utm, ad_ids, is_paid)
          values (${a}, ${randomUUID()}, ${contact?.id}, 'web', 'page_view', ${at}, ${JSON.stringify(utm)}::jsonb,
                  ${JSON.stringify(adIds)}::jsonb, ${paid})`),
      );
    await web(
      "2026-01-10T00:00:00Z",
      { source: "facebook", medium: "paid", campaign: "Spring", content: "Video A" },
      { ad_id: "120210000000000001" },
      true,
    );
    await web("2026-01-12T00:00:00Z", { source: "newsletter", medium: "email" }, {}, false);
    await web(
      "2026-03-01T00:00:00Z",
      { source: "google", medium: "cpc", campaign: "Later" },
      { ad_id: "999" },
      true,
    );
    await ingest(a, [
      event({
        id: "book",
        event_type: "booking",
        contact_email: "cat@example.com",
        event_datetime: "2026-02-01T00:00:00Z",
      }),
    ]);
    const [booked] = await select<Record<string, unknown>>(
      a,
      sql`select utm_source, utm_medium, utm_campaign, utm_content, utm_ad_id, utm_enriched
          from events where account_id = ${a} and id = 'book'`,
    );
    assert.deepEqual(booked, {
      utm_source: "newsletter",
      utm_medium: "email",
      utm_campaign: "Spring",
      utm_content: "Video A",
      utm_ad_id: "120210000000000001",
      utm_enriched: true,
    });
  });

  test("ad resolution at ingest: exact id, by name, unresolved", async () => {
    const { accountId: a } = await seedAccount(db);
    await db.admin(a, (tx) =>
      tx.execute(sql`
        insert into ads (account_id, platform, ad_id, ad_name, campaign_name) values
          (${a}, 'meta', '120210000000000001', 'Video A', 'Spring'),
          (${a}, 'meta', '120210000000000002', 'Carousel B', 'Spring')`),
    );
    await ingest(a, [
      event({ id: "x", utm_ad_id: "120210000000000002", utm_content: "Video A" }),
      event({ id: "y", utm_content: "  video a " }),
      event({ id: "z", utm_content: "{{ad.name}}" }),
    ]);
    const resolved = await select<{ id: string; resolution: string; resolved_ad_id: string | null }>(
      a,
      sql`select id, resolution, resolved_ad_id from events where account_id = ${a} order by id`,
    );
    assert.deepEqual(resolved, [
      { id: "x", resolution: "exact", resolved_ad_id: "120210000000000002" },
      { id: "y", resolution: "by_name", resolved_ad_id: "120210000000000001" },
      { id: "z", resolution: "unresolved", resolved_ad_id: null },
    ]);
  });

  test("sale counting follows ingestion", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [
      event({
        id: "s1",
        event_type: "sale",
        contact_email: "dan@example.com",
        amount: 3000,
        product_key: "p",
      }),
      event({
        id: "p1",
        event_type: "payment",
        payment_status: "paid",
        contact_email: "dan@example.com",
        amount: 1000,
        product_key: "p",
        event_datetime: "2026-02-03T10:00:00Z",
      }),
    ]);
    const counted = await select<{
      id: string;
      counted: boolean;
      drop_reason: string | null;
      group_key: string;
    }>(
      a,
      sql`select id, counted, drop_reason, group_key from events where account_id = ${a} order by event_datetime`,
    );
    assert.deepEqual(counted, [
      { id: "s1", counted: true, drop_reason: null, group_key: "s1" },
      { id: "p1", counted: false, drop_reason: "duplicate", group_key: "s1" },
    ]);
  });

  test("a new sale is written counted: the recount after the write updates only the stored sales it changes", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [dansSale({ id: "s1" })]);
    // What the ingest wrote to events, from the statistics of its own transaction (read before and
    // after: the embedded database keeps adding to them across transactions).
    const written = (tx: Sql) =>
      rows<{ inserted: number; updated: number }>(
        tx,
        sql`select n_tup_ins::int as inserted, n_tup_upd::int as updated
            from pg_stat_xact_user_tables where relname = 'events'`,
      ).then(([r]) => r ?? { inserted: 0, updated: 0 });
    const writes = await db.tenant(a, async (tx) => {
      const before = await written(tx);
      await ingestCrmEvents(
        tx,
        a,
        [
          // joins s1's purchase: s1, stored, gains its revenue
          dansPayment(),
          // a purchase of its own
          dansSale({ id: "s2", product_key: "q", amount: 500, event_datetime: "2026-02-04T10:00:00Z" }),
        ],
        { origin: "webhook" },
      );
      const after = await written(tx);
      return { inserted: after.inserted - before.inserted, updated: after.updated - before.updated };
    });
    // Written counted, p1 and s2 are not updated again; s1 is, once.
    assert.deepEqual(writes, { inserted: 2, updated: 1 });
    assert.deepEqual(await saleCounts(a), [
      { id: "s1", counted: true, drop_reason: null, group_key: "s1", group_revenue: "4000.00" },
      { id: "p1", counted: false, drop_reason: "duplicate", group_key: "s1", group_revenue: null },
      { id: "s2", counted: true, drop_reason: null, group_key: "s2", group_revenue: "500.00" },
    ]);
  });

  test("a sale replaced by a lead leaves sale counting, and its purchase is counted again without it", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [dansSale({ id: "s1" }), dansPayment()]);
    await ingest(a, [dansSale({ id: "s1", event_type: "lead" })]);
    assert.deepEqual(await saleCounts(a), [
      { id: "s1", counted: null, drop_reason: null, group_key: null, group_revenue: null },
      { id: "p1", counted: true, drop_reason: null, group_key: "p1", group_revenue: "1000.00" },
    ]);
  });

  test("a payment moved to another contact leaves its old purchase and opens one of the new contact's", async () => {
    const { accountId: a } = await seedAccount(db);
    await ingest(a, [dansSale({ id: "s1" }), dansPayment()]);
    await ingest(a, [dansPayment({ contact_email: "eve@example.com" })]);
    assert.deepEqual(await saleCounts(a), [
      { id: "s1", counted: true, drop_reason: null, group_key: "s1", group_revenue: "3000.00" },
      { id: "p1", counted: true, drop_reason: null, group_key: "p1", group_revenue: "1000.00" },
    ]);
  });
});
