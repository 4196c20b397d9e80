import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { crmEventSchema } from "../../src/ingest/crm-event.ts";
import { ingestCrmEvents } from "../../src/ingest/ingest-events.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

/*
 * Migration 0034: the events' batch insert computes the ad of record itself (set-based) and the
 * row trigger stands aside for that statement only; an UPDATE calls the trigger only when what it
 * depends on changed. Both must store what the per-row trigger stored.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface Recorded {
  id: string;
  record: string | null;
  first_touch_ad: string | null;
  assist_ads: string[] | null;
}

const recorded = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<Recorded>(
      tx,
      sql`select id, record_platform || '/' || record_ad_id as record, first_touch_ad, assist_ads
          from events where account_id = ${accountId} order by id`,
    ),
  );

const ads = [
  { platform: "meta", ad_id: "A1", ad_name: "Ad One", date: "2026-03-01", total_spend: 1 },
  { platform: "meta", ad_id: "A2", ad_name: "Ad Two", date: "2026-03-01", total_spend: 1 },
];
const visit = (id: string, at: string, adId: string) => ({
  id,
  email: "ann@x.test",
  kind: "web",
  event_type: "page_view",
  occurred_at: at,
  ad_id: adId,
});

test("a batch's ad of record, set by its insert, is what the row trigger sets for the same rows", async () => {
  const { accountId: a } = await seedAccount(db);
  await loadFixture(db, a, {
    spend: ads,
    touchpoints: [visit("v1", "2026-03-02T10:00:00Z", "A1"), visit("v2", "2026-03-03T10:00:00Z", "A2")],
  });
  const batch = [
    // Its own UTMs and no ad: the last ad touch before it, v2.
    { id: "l1", event_type: "lead", event_datetime: "2026-03-04T10:00:00Z", utm_source: "newsletter" },
    // Its own ad A1; touches v1 (A1, first) and v2 (A2, assisting).
    { id: "s1", event_type: "sale", event_datetime: "2026-03-06T10:00:00Z", utm_ad_id: "A1", amount: 100 },
  ].map((e) => crmEventSchema.parse({ contact_email: "ann@x.test", ...e }));
  await db.admin(a, async (tx) => {
    await ingestCrmEvents(tx, a, batch, { origin: "import" });
    // Later in the same transaction, a plain INSERT (the setting back off): the trigger computes the
    // twins' columns from scratch, the stored ones cleared first.
    await tx.execute(sql`create temp table twins on commit drop as
      select * from events where account_id = ${a} and id in ('l1', 's1')`);
    await tx.execute(sql`update twins set id = 't-' || id, record_platform = null, record_ad_id = null,
      first_touch_ad = null, assist_ads = null`);
    await tx.execute(sql`insert into events select * from twins`);
  });
  const lead = { record: "meta/A2", first_touch_ad: null, assist_ads: null };
  const sale = { record: "meta/A1", first_touch_ad: "meta/A1", assist_ads: ["meta/A2"] };
  assert.deepEqual(await recorded(a), [
    { id: "l1", ...lead },
    { id: "s1", ...sale },
    { id: "t-l1", ...lead },
    { id: "t-s1", ...sale },
  ]);
});

test("an update recomputes the ad of record only when what it depends on changed", async () => {
  const { accountId: a } = await seedAccount(db);
  await loadFixture(db, a, {
    spend: ads,
    touchpoints: [visit("v1", "2026-03-02T10:00:00Z", "A1")],
    events: [
      {
        id: "l1",
        event_type: "lead",
        event_datetime: "2026-03-04T10:00:00Z",
        contact_email: "ann@x.test",
        utm_source: "newsletter",
      },
    ],
  });
  const update = (set: ReturnType<typeof sql>) =>
    db.admin(a, (tx) => tx.execute(sql`update events set ${set} where account_id = ${a} and id = 'l1'`));
  assert.deepEqual(
    (await recorded(a)).map((r) => r.record),
    ["meta/A1"],
  );
  // Its own ad now: recomputed.
  await update(sql`resolved_platform = 'meta', resolved_ad_id = 'A2'`);
  assert.deepEqual(
    (await recorded(a)).map((r) => r.record),
    ["meta/A2"],
  );
  // Moved before its last ad touch, its own ad gone: recomputed (no touch at or before it).
  await update(sql`resolved_platform = null, resolved_ad_id = null, event_datetime = '2026-03-01T10:00:00Z'`);
  assert.deepEqual(
    (await recorded(a)).map((r) => r.record),
    [null],
  );
  // Nothing it depends on changed: the stored columns are left as written.
  await update(sql`record_platform = 'meta', record_ad_id = 'A9', product_name = 'Coaching'`);
  assert.deepEqual(
    (await recorded(a)).map((r) => r.record),
    ["meta/A9"],
  );
  // An INSERT whose statement says it computed the columns itself keeps them (the trigger stands
  // aside); without the setting the trigger computes them.
  await db.admin(a, async (tx) => {
    await tx.execute(sql`create temp table twins on commit drop as
      select * from events where account_id = ${a} and id = 'l1'`);
    await tx.execute(sql`update twins set id = 'set', event_datetime = '2026-03-05T10:00:00Z',
      record_platform = 'meta', record_ad_id = 'A7'`);
    await tx.execute(sql`select set_config('ascribe.ad_of_record_in_statement', 'on', true)`);
    await tx.execute(sql`insert into events select * from twins`);
    await tx.execute(sql`select set_config('ascribe.ad_of_record_in_statement', 'off', true)`);
    await tx.execute(sql`update twins set id = 'trigger'`);
    await tx.execute(sql`insert into events select * from twins`);
  });
  assert.deepEqual(
    (await recorded(a)).map((r) => [r.id, r.record]),
    [
      ["l1", "meta/A9"],
      ["set", "meta/A7"],
      ["trigger", "meta/A1"],
    ],
  );
});
