import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { type ImportKind, importKinds } from "../../src/import/kinds.ts";
import { catchUpContactMaintenance } from "../../src/import/maintenance-schedule.ts";
import { runImport } from "../../src/import/run-import.ts";
import type { CrmEvent } from "../../src/ingest/crm-event.ts";
import { ingestCrmEvents } from "../../src/ingest/ingest-events.ts";
import { deferContactMaintenance } from "../../src/queries/contact-maintenance.ts";
import { backend, openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

/*
 * Issue 20, "set-based imports": an import's batches note the contacts they wrote and the import
 * brings each one's activity, milestones and customer totals up to date once, at its end (migration
 * 0046). Everything else still maintains at once; an import that never reaches its end leaves the
 * notes to `ascribe serve`'s schedule.
 */

let db: Database;
let dir: string;
before(async () => {
  db = await openTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "ascribe-deferred-maintenance-"));
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const EVENTS: CrmEvent[] = [
  {
    id: "a-l1",
    event_type: "lead",
    event_datetime: "2026-01-05T09:00:00Z",
    contact_email: "a@example.com",
    utm_source: "facebook",
  },
  {
    id: "b-l1",
    event_type: "lead",
    event_datetime: "2026-01-06T09:00:00Z",
    contact_email: "b@example.com",
    utm_source: "google",
  },
  {
    id: "a-s1",
    event_type: "sale",
    event_datetime: "2026-01-09T12:00:00Z",
    contact_email: "a@example.com",
    amount: 1000,
    product_key: "p1",
  },
  {
    id: "b-b1",
    event_type: "booking",
    event_datetime: "2026-01-10T08:00:00Z",
    contact_email: "b@example.com",
    booking_date: "2026-01-12",
    booking_time: "10:00",
  },
  {
    id: "a-p1",
    event_type: "payment",
    event_datetime: "2026-01-20T12:00:00Z",
    contact_email: "a@example.com",
    amount: 250,
    product_key: "p2",
    payment_status: "paid",
  },
];

/** Two purchases make a a customer (the purchases import, src/import/kinds.ts). */
const PURCHASES = [
  {
    id: "inv-1",
    purchase_date: "2026-01-09T12:00:00Z",
    contact_email: "a@example.com",
    amount: 1000,
    product_key: "p1",
  },
  {
    id: "inv-2",
    purchase_date: "2026-01-20T12:00:00Z",
    contact_email: "a@example.com",
    amount: 250,
    product_key: "p2",
  },
];

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);

/** What the deferred triggers keep, per contact by email, and the account's notes. */
async function state(accountId: string) {
  return db.admin(accountId, async (tx) => {
    const email = sql`(select c.email from contacts c where c.account_id = x.account_id and c.id = x.contact_id)`;
    const activity = await rows<{ email: string; first: string | null; last: string | null }>(
      tx,
      sql`select ${email} as email, ${iso("x.first_event_at")} as first, ${iso("x.last_event_at")} as last
          from contact_activity x where x.account_id = ${accountId} order by 1`,
    );
    const milestones = await rows<{
      email: string;
      lead: string | null;
      source: string | null;
      stage: number;
    }>(
      tx,
      sql`select ${email} as email, ${iso("x.first_lead_at")} as lead, x.lead_source as source, x.stage
          from contact_milestones x where x.account_id = ${accountId} order by 1`,
    );
    const totals = await rows<{ email: string; revenue: number; purchases: number }>(
      tx,
      sql`select ${email} as email, x.total_revenue::float8 as revenue, x.total_purchases as purchases
          from customer_totals x where x.account_id = ${accountId} order by 1`,
    );
    const noted = await rows<{ email: string }>(
      tx,
      sql`select ${email} as email from contact_maintenance_backlog x where x.account_id = ${accountId} order by 1`,
    );
    return { activity, milestones, totals, noted: noted.map((n) => n.email) };
  });
}

/** Written out by hand from EVENTS. */
const UP_TO_DATE = {
  activity: [
    { email: "a@example.com", first: "2026-01-05T09:00:00Z", last: "2026-01-20T12:00:00Z" },
    { email: "b@example.com", first: "2026-01-06T09:00:00Z", last: "2026-01-10T08:00:00Z" },
  ],
  milestones: [
    { email: "a@example.com", lead: "2026-01-05T09:00:00Z", source: "facebook", stage: 5 },
    { email: "b@example.com", lead: "2026-01-06T09:00:00Z", source: "google", stage: 3 },
  ],
  totals: [{ email: "a@example.com", revenue: 1250, purchases: 2 }],
  noted: [],
};

function file(records: readonly object[]): string {
  const path = join(dir, `events-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join("\n"));
  return path;
}

/** A batch as an import writes it, outside runImport: noted, not maintained. */
async function importBatch(accountId: string, kind: "events" | "purchases", records: readonly object[]) {
  const writer = importKinds[kind] as ImportKind<unknown>;
  await db.tenant(accountId, async (tx: Sql) => {
    await deferContactMaintenance(tx);
    await writer.write(tx, accountId, [...records], { secrets: testSecrets });
  });
}

describe("an import's contact maintenance, once at its end", () => {
  test("batches note their contacts without maintaining them; the import's end brings them up to date", async () => {
    const { accountId } = await seedAccount(db);
    const seenBeforeCommit: string[][] = [];
    const summary = await runImport(
      db,
      testSecrets,
      { kind: "events", account: accountId, file: file(EVENTS) },
      () => {},
      {
        batchSize: 2,
        beforeCommit: async (tx) => {
          const found = await rows<{ email: string; maintained: boolean }>(
            tx,
            sql`select c.email, exists (select 1 from contact_milestones m
                                        where m.account_id = c.account_id and m.contact_id = c.id) as maintained
                from contact_maintenance_backlog b
                join contacts c on c.account_id = b.account_id and c.id = b.contact_id
                where b.account_id = ${accountId} order by 1`,
          );
          assert.ok(
            found.every((f) => !f.maintained),
            "no milestones written during the import",
          );
          seenBeforeCommit.push(found.map((f) => f.email));
        },
      },
    );
    assert.deepEqual(summary, { imported: 5, updated: 0, skipped: 0, errors: [] });
    // Batches of two: a and b; then a (already noted) and b; then a.
    assert.deepEqual(seenBeforeCommit, [
      ["a@example.com", "b@example.com"],
      ["a@example.com", "b@example.com"],
      ["a@example.com", "b@example.com"],
    ]);
    const afterEvents = await state(accountId);
    assert.deepEqual(afterEvents, { ...UP_TO_DATE, totals: [] });

    // A purchases import: its customer's totals, once at its end too.
    const purchases = await runImport(
      db,
      testSecrets,
      { kind: "purchases", account: accountId, file: file(PURCHASES) },
      () => {},
      { batchSize: 1 },
    );
    assert.deepEqual(purchases, { imported: 2, updated: 0, skipped: 0, errors: [] });
    assert.deepEqual(await state(accountId), UP_TO_DATE);
  });

  test("a write outside an import (a webhook) maintains at once and notes nothing", async () => {
    const { accountId } = await seedAccount(db);
    await db.tenant(accountId, (tx) => ingestCrmEvents(tx, accountId, EVENTS, { origin: "webhook" }));
    assert.deepEqual(await state(accountId), { ...UP_TO_DATE, totals: [] });
  });

  test("an import stopped before its end leaves its contacts noted; the schedule brings them up to date", async () => {
    const { accountId } = await seedAccount(db);
    await importBatch(accountId, "events", EVENTS.slice(0, 3));
    const stopped = await state(accountId);
    assert.deepEqual(stopped.noted, ["a@example.com", "b@example.com"]);
    assert.deepEqual(stopped.milestones, []);
    assert.deepEqual(stopped.totals, []);
    // The contacts' rows exist (the contact list shows them at once), their bounds not yet.
    assert.deepEqual(stopped.activity, [
      { email: "a@example.com", first: null, last: null },
      { email: "b@example.com", first: null, last: null },
    ]);
    await importBatch(accountId, "events", EVENTS.slice(3));
    await importBatch(accountId, "purchases", PURCHASES);
    assert.deepEqual((await state(accountId)).totals, [], "no customer totals before the drain");

    const drained = await catchUpContactMaintenance(db);
    assert.ok(drained.includes(accountId), "the account is drained");
    assert.deepEqual(await state(accountId), UP_TO_DATE);
    assert.ok(!(await catchUpContactMaintenance(db)).includes(accountId), "nothing left the next time");
  });

  test("each immediate maintenance function returns at once in a deferring transaction, deletes excepted", async () => {
    const functions = await db.admin(null, (tx) =>
      rows<{ name: string; gated: boolean }>(
        tx,
        sql`select proname as name,
                   position(${"IF TG_OP <> 'DELETE' AND current_setting('app.defer_contact_maintenance', true) = 'on' THEN"} in prosrc) > 0 as gated
            from pg_proc
            where proname in ('ascribe_events_milestones', 'ascribe_activity_trigger',
                              'ascribe_touchpoints_activity', 'ascribe_customer_totals_trigger')
            order by 1`,
      ),
    );
    assert.deepEqual(functions, [
      { name: "ascribe_activity_trigger", gated: true },
      { name: "ascribe_customer_totals_trigger", gated: true },
      { name: "ascribe_events_milestones", gated: true },
      { name: "ascribe_touchpoints_activity", gated: true },
    ]);
  });

  test("a drain waits for a batch that noted an already noted contact, then counts its rows", {
    skip: backend !== "postgres" && "two connections at once: PostgreSQL only",
  }, async () => {
    const { accountId } = await seedAccount(db);
    await importBatch(accountId, "events", EVENTS.slice(0, 1));
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let noted: () => void = () => {};
    const notedOnce = new Promise<void>((resolve) => {
      noted = resolve;
    });
    // A later batch of a's, still open when the drain starts: a's note already exists.
    const batch = db.tenant(accountId, async (tx) => {
      await deferContactMaintenance(tx);
      await ingestCrmEvents(tx, accountId, EVENTS.slice(2, 3), { origin: "import" });
      noted();
      await held;
    });
    await notedOnce;
    let drainDone = false;
    const drain = catchUpContactMaintenance(db).then(() => {
      drainDone = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(drainDone, false, "the drain waits for the open batch");
    release();
    await batch;
    await drain;
    const after = await state(accountId);
    assert.deepEqual(after.noted, []);
    assert.deepEqual(after.activity, [
      { email: "a@example.com", first: "2026-01-05T09:00:00Z", last: "2026-01-09T12:00:00Z" },
    ]);
  });
});
