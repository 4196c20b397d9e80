import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { runImport } from "../../src/import/run-import.ts";
import { foldReportRollup } from "../../src/queries/fold-report-rollup.ts";
import { openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

/*
 * Issue 20, "set-based imports": the rollups, read models and contact activity are kept per batch
 * (statement triggers over a batch's rows, migrations 0028–0029). Whatever the batches, they must
 * hold what writing the same file one record at a time gives, and a replay must change nothing.
 */

let db: Database;
let dir: string;
before(async () => {
  db = await openTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "ascribe-batch-maintenance-"));
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const SPEND = [
  {
    platform: "meta",
    ad_id: "111",
    ad_name: "Ad 111",
    campaign_id: "c1",
    campaign_name: "Spring",
    date: "2026-01-05",
    total_spend: 10,
  },
  {
    platform: "meta",
    ad_id: "222",
    ad_name: "Ad 222",
    campaign_id: "c2",
    campaign_name: "Winter",
    date: "2026-01-02",
    total_spend: 20,
  },
];

/**
 * Not in time order on purpose: `a-l0` comes last but is a's earliest event and ad touch, so a
 * batch of one must correct what the earlier batches stored (ad of record, first touch, activity,
 * milestones) as a single batch gets it right at once.
 */
const EVENTS = [
  {
    id: "a-l1",
    event_type: "lead",
    event_datetime: "2026-01-05T09:00:00Z",
    contact_email: "a@example.com",
    utm_source: "facebook",
    utm_ad_id: "111",
  },
  {
    id: "a-b1",
    event_type: "booking",
    event_datetime: "2026-01-06T10:00:00Z",
    contact_email: "A@Example.com ",
    booking_date: "2026-01-08",
    booking_time: "14:00",
    assigned_user_name: "Rep One",
  },
  {
    id: "a-s1",
    event_type: "sale",
    event_datetime: "2026-01-09T12:00:00Z",
    contact_email: "a@example.com",
    amount: 1000,
    product_key: "p1",
    assigned_user_name: "Rep One",
  },
  {
    id: "b-l2",
    event_type: "lead",
    event_datetime: "2026-01-10T08:00:00Z",
    contact_email: "b@example.com",
    utm_source: "facebook",
    utm_ad_id: "222",
  },
  {
    id: "b-s2",
    event_type: "sale",
    event_datetime: "2026-01-12T08:00:00Z",
    contact_email: "b@example.com",
    amount: 300,
    product_key: "p2",
    utm_ad_id: "111",
  },
  {
    id: "a-p1",
    event_type: "payment",
    event_datetime: "2026-01-20T12:00:00Z",
    contact_email: "a@example.com",
    amount: 500,
    product_key: "p1",
    payment_status: "paid",
  },
  {
    id: "c-l3",
    event_type: "lead",
    event_datetime: "2026-01-03T07:00:00Z",
    contact_phone: "+33 6 12 34 56 78",
    utm_source: "newsletter",
  },
  {
    id: "a-r1",
    event_type: "payment",
    event_datetime: "2026-02-01T12:00:00Z",
    contact_email: "a@example.com",
    amount: 200,
    product_key: "p1",
    payment_status: "refunded",
  },
  {
    id: "a-l0",
    event_type: "lead",
    event_datetime: "2026-01-02T09:00:00Z",
    contact_email: "a@example.com",
    utm_source: "facebook",
    utm_ad_id: "222",
  },
];

function file(name: string, records: readonly object[]): string {
  const path = join(dir, name);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join("\n"));
  return path;
}

/** An instant as the same text on both drivers. */
const iso = (column: string) =>
  sql.raw(
    `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as ${column.replace(/^x\./, "")}`,
  );

/** Everything the triggers maintain, keyed without the account's own ids (contacts by identity). */
async function maintained(accountId: string) {
  await db.tenant(accountId, (tx) => foldReportRollup(tx, accountId));
  return db.admin(accountId, async (tx) => {
    const contact = sql`(select coalesce(c.email, c.phone) from contacts c where c.account_id = x.account_id and c.id = x.contact_id)`;
    const events = await rows(
      tx,
      sql`select x.id, ${contact} as contact, x.record_platform, x.record_ad_id, x.first_touch_ad, x.assist_ads,
                 x.counted, x.drop_reason, x.group_key, x.contact_seq, x.group_revenue::float8 as group_revenue,
                 x.group_refunds::float8 as group_refunds
          from events x where x.account_id = ${accountId} order by x.id`,
    );
    const rollup = await rows(
      tx,
      sql`select dim, day::text as day, key, leads, applications, bookings, no_shows, cancels, sales,
                 revenue::float8 as revenue, refunds::float8 as refunds, meetings, events, signal_events,
                 exact_events, unresolved_events, leads_without_utm
          from report_rollup_daily where account_id = ${accountId}
            and (leads, bookings, sales, revenue, refunds, meetings, events) <> (0, 0, 0, 0, 0, 0, 0)
          order by dim, day, key`,
    );
    const touchpoints = await rows(
      tx,
      sql`select day::text as day, kind, platform, ad_id, source, campaign, touchpoints
          from touchpoint_rollup_daily where account_id = ${accountId} and touchpoints <> 0
          order by day, kind, platform, ad_id, source, campaign`,
    );
    const milestones = await rows(
      tx,
      sql`select ${contact} as contact, ${iso("x.first_lead_at")}, x.lead_source, ${iso("x.booking_at")},
                 x.show_day::text as show_day, ${iso("x.sale_at")}, x.sale_product_key, x.stage,
                 ${iso("x.first_sale_at")}, ${iso("x.cycle_started_at")}
          from contact_milestones x where x.account_id = ${accountId} order by 1`,
    );
    const activity = await rows(
      tx,
      sql`select ${contact} as contact, ${iso("x.first_event_at")}, ${iso("x.last_event_at")},
                 ${iso("x.first_seen_at")}, ${iso("x.last_seen_at")}
          from contact_activity x where x.account_id = ${accountId} order by 1`,
    );
    return { events, rollup, touchpoints, milestones, activity };
  });
}

async function importInto(batchSize: number) {
  const { accountId } = await seedAccount(db);
  await runImport(db, testSecrets, { kind: "spend", account: accountId, file: file("spend.jsonl", SPEND) });
  const path = file("events.jsonl", EVENTS);
  const summary = await runImport(
    db,
    testSecrets,
    { kind: "events", account: accountId, file: path },
    () => {},
    {
      batchSize,
    },
  );
  return { accountId, path, summary };
}

describe("import: per-batch maintenance", () => {
  test("one batch and one record at a time give the same rollups, read models and activity; a replay changes nothing", async () => {
    const batch = await importInto(1000);
    const single = await importInto(1);
    assert.deepEqual(batch.summary, { imported: 9, updated: 0, skipped: 0, errors: [] });
    assert.deepEqual(single.summary, { imported: 9, updated: 0, skipped: 0, errors: [] });

    const batched = await maintained(batch.accountId);
    const oneByOne = await maintained(single.accountId);
    assert.deepEqual(batched, oneByOne);

    // Written out by hand from the file.
    const event = (id: string) => batched.events.find((e) => (e as { id: string }).id === id);
    // The sale: last ad touch before it a's lead of 01-05 (ad 111), first touch the late line's ad 222.
    assert.deepEqual(event("a-s1"), {
      id: "a-s1",
      contact: "a@example.com",
      record_platform: "meta",
      record_ad_id: "111",
      first_touch_ad: "meta/222",
      assist_ads: [],
      counted: true,
      drop_reason: null,
      group_key: "a-s1",
      contact_seq: 1,
      group_revenue: 1500,
      group_refunds: 200,
    });
    assert.equal((event("a-p1") as { drop_reason: string }).drop_reason, "duplicate");
    // b's sale carries its own ad (111, the ad of record); its first touch is b's lead (222).
    assert.deepEqual(
      [event("b-s2")].map((e) => {
        const { record_ad_id, first_touch_ad, assist_ads, counted } = e as Record<string, unknown>;
        return { record_ad_id, first_touch_ad, assist_ads, counted };
      }),
      [{ record_ad_id: "111", first_touch_ad: "meta/222", assist_ads: [], counted: true }],
    );
    const activityOfA = batched.activity.find((a) => (a as { contact: string }).contact === "a@example.com");
    assert.deepEqual(Object.values(activityOfA as object), [
      "a@example.com",
      "2026-01-02T09:00:00Z",
      "2026-02-01T12:00:00Z",
      "2026-01-02T09:00:00Z",
      "2026-02-01T12:00:00Z",
    ]);
    const milestonesOfA = batched.milestones.find(
      (m) => (m as { contact: string }).contact === "a@example.com",
    ) as Record<string, unknown>;
    assert.equal(milestonesOfA.first_lead_at, "2026-01-02T09:00:00Z");
    assert.equal(milestonesOfA.stage, 5);
    const total = batched.rollup.filter((r) => (r as { dim: string }).dim === "total") as Record<
      string,
      number
    >[];
    const sum = (k: string) => total.reduce((s, r) => s + Number(r[k]), 0);
    assert.deepEqual(
      {
        leads: sum("leads"),
        bookings: sum("bookings"),
        sales: sum("sales"),
        revenue: sum("revenue"),
        refunds: sum("refunds"),
        meetings: sum("meetings"),
        events: sum("events"),
      },
      { leads: 4, bookings: 1, sales: 2, revenue: 1800, refunds: 200, meetings: 1, events: 9 },
    );

    const replay = await runImport(db, testSecrets, {
      kind: "events",
      account: batch.accountId,
      file: batch.path,
    });
    assert.deepEqual(replay, { imported: 0, updated: 0, skipped: 9, errors: [] });
    assert.deepEqual(await maintained(batch.accountId), batched);
  });
});
