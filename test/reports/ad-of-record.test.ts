import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const recordOf = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ id: string; record: string | null }>(
      tx,
      sql`select id, record_platform || '/' || record_ad_id as record from events
          where account_id = ${accountId} order by id`,
    ),
  );

const ads = [
  { platform: "meta", ad_id: "A1", ad_name: "Ad One", date: "2026-03-01", total_spend: 1 },
  { platform: "meta", ad_id: "A2", ad_name: "Ad Two", date: "2026-03-01", total_spend: 1 },
];
const visit = (id: string, at: string, extra: Record<string, unknown>) => ({
  id,
  email: "ann@x.test",
  kind: "web",
  event_type: "page_view",
  occurred_at: at,
  ...extra,
});

test("the ad of record is the event's own ad, else the last ad touch before it; a later organic touch never takes it", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  await loadFixture(db, a, {
    spend: ads,
    touchpoints: [
      visit("v0", "2025-01-01T10:00:00Z", { ad_id: "A2" }), // more than 365 days before l2: too old
      visit("v1", "2026-03-02T10:00:00Z", { ad_id: "A1" }),
      visit("v2", "2026-03-03T10:00:00Z", { utm_source: "newsletter", utm_medium: "email" }),
    ],
    events: [
      // From the newsletter: a source, no ad of its own.
      {
        id: "l1",
        event_type: "lead",
        event_datetime: "2026-03-04T10:00:00Z",
        contact_email: "ann@x.test",
        utm_source: "newsletter",
        utm_medium: "email",
      },
      // A bio-link lead (a source, no ad): its only ad touch, v0, is more than 365 days older.
      {
        id: "l2",
        event_type: "lead",
        event_datetime: "2026-03-01T10:00:00Z",
        contact_email: "ann@x.test",
        utm_source: "instagram",
        utm_medium: "bio",
      },
      {
        id: "l3",
        event_type: "lead",
        event_datetime: "2026-03-05T10:00:00Z",
        contact_email: "ann@x.test",
        utm_ad_id: "A2",
      },
    ],
  });
  assert.deepEqual(await recordOf(a), [
    { id: "l1", record: "meta/A1" },
    { id: "l2", record: null },
    { id: "l3", record: "meta/A2" },
  ]);

  // A visit imported later, between v2 and l1, moves l1's ad of record; l3 keeps its own ad.
  await loadFixture(db, a, { touchpoints: [visit("v3", "2026-03-03T12:00:00Z", { ad_id: "A2" })] });
  assert.deepEqual(await recordOf(a), [
    { id: "l1", record: "meta/A2" },
    { id: "l2", record: null },
    { id: "l3", record: "meta/A2" },
  ]);

  // A visit that loses its ad (here: moved out of the look-back) gives the credit back.
  await db.admin(a, (tx) =>
    tx.execute(sql`update touchpoints set occurred_at = '2024-01-01T00:00:00Z'
                   where account_id = ${a} and external_id = 'v3'`),
  );
  assert.deepEqual(await recordOf(a), [
    { id: "l1", record: "meta/A1" },
    { id: "l2", record: null },
    { id: "l3", record: "meta/A2" },
  ]);
});
