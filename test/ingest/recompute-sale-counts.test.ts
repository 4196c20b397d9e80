import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { recomputeSaleCounts } from "../../src/ingest/recompute-sale-counts.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface Seed {
  id: string;
  contact: string | null;
  type: "sale" | "payment" | "lead";
  at: string;
  product?: string;
  amount?: number;
  status?: string;
  baseline?: boolean;
  cancelled?: boolean;
}

async function seedEvents(accountId: string, contacts: string[], events: Seed[]) {
  await db.admin(accountId, async (tx) => {
    for (const email of contacts) {
      await tx.execute(
        sql`insert into contacts (account_id, id, email) values (${accountId}, ${contactIds.get(email)}, ${email})`,
      );
    }
    for (const e of events) {
      await tx.execute(sql`
        insert into events (account_id, id, contact_id, event_type, event_datetime, product_key, amount,
                            payment_status, is_baseline, cancelled_at, origin)
        values (${accountId}, ${e.id}, ${e.contact === null ? null : contactIds.get(e.contact)}, ${e.type},
                ${e.at}, ${e.product ?? "coaching"}, ${e.amount ?? 1000}, ${e.status ?? null},
                ${e.baseline ?? false}, ${e.cancelled ? e.at : null}, 'import')`);
    }
  });
}

const contactIds = new Map<string, string>([
  ["ann@example.com", randomUUID()],
  ["bob@example.com", randomUUID()],
]);

const verdicts = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{
      id: string;
      counted: boolean | null;
      drop_reason: string | null;
      group_key: string | null;
      contact_seq: number | null;
    }>(
      tx,
      sql`select id, counted, drop_reason, group_key, contact_seq from events where account_id = ${accountId} order by id`,
    ),
  );

test("sale counting is materialized on the events and recomputed when the rule changes", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  await seedEvents(
    a,
    ["ann@example.com", "bob@example.com"],
    [
      { id: "e1", contact: "ann@example.com", type: "sale", at: "2026-01-01T10:00:00Z" },
      { id: "e2", contact: "ann@example.com", type: "payment", at: "2026-01-05T10:00:00Z", status: "paid" },
      { id: "e3", contact: "ann@example.com", type: "sale", at: "2026-03-01T10:00:00Z" },
      { id: "e4", contact: "bob@example.com", type: "sale", at: "2026-01-02T10:00:00Z", baseline: true },
      { id: "e5", contact: "bob@example.com", type: "sale", at: "2026-01-03T10:00:00Z", cancelled: true },
      { id: "e6", contact: null, type: "sale", at: "2026-01-04T10:00:00Z" },
      { id: "e7", contact: "ann@example.com", type: "lead", at: "2025-12-30T10:00:00Z" },
    ],
  );
  const result = await db.tenant(a, (tx) => recomputeSaleCounts(tx, a));
  assert.deepEqual(result, { events: 6 });
  assert.deepEqual(await verdicts(a), [
    { id: "e1", counted: true, drop_reason: null, group_key: "e1", contact_seq: 1 },
    { id: "e2", counted: false, drop_reason: "duplicate", group_key: "e1", contact_seq: 2 },
    { id: "e3", counted: true, drop_reason: null, group_key: "e3", contact_seq: 3 },
    { id: "e4", counted: false, drop_reason: "baseline", group_key: "e4", contact_seq: 1 },
    { id: "e5", counted: false, drop_reason: "cancelled", group_key: null, contact_seq: 2 },
    { id: "e6", counted: true, drop_reason: null, group_key: "e6", contact_seq: 1 },
    { id: "e7", counted: null, drop_reason: null, group_key: null, contact_seq: null },
  ]);

  // A 90-day window makes Ann's March sale a repeat of January's; counting baseline makes Bob's count.
  await db.admin(a, (tx) =>
    tx.execute(sql`
      insert into account_settings (account_id, sale_rule)
      values (${a}, ${JSON.stringify({ window_days: 90, exclude_baseline: false })}::jsonb)`),
  );
  await db.tenant(a, (tx) => recomputeSaleCounts(tx, a));
  const after = await verdicts(a);
  assert.deepEqual(
    after.map((v) => [v.id, v.counted, v.drop_reason, v.group_key]),
    [
      ["e1", true, null, "e1"],
      ["e2", false, "duplicate", "e1"],
      ["e3", false, "duplicate", "e1"],
      ["e4", true, null, "e4"],
      ["e5", false, "cancelled", null],
      ["e6", true, null, "e6"],
      ["e7", null, null, null],
    ],
  );
});

test("recomputing one contact leaves the others as they are", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  await seedEvents(
    a,
    ["ann@example.com", "bob@example.com"],
    [
      { id: "x1", contact: "ann@example.com", type: "sale", at: "2026-01-01T10:00:00Z" },
      { id: "y1", contact: "bob@example.com", type: "sale", at: "2026-01-01T10:00:00Z" },
    ],
  );
  await db.tenant(a, (tx) =>
    recomputeSaleCounts(tx, a, { contactIds: [contactIds.get("ann@example.com") ?? ""] }),
  );
  assert.deepEqual(
    (await verdicts(a)).map((v) => [v.id, v.counted]),
    [
      ["x1", true],
      ["y1", null],
    ],
  );
});

test("a purchase's revenue, refunds and disputes are stored on its opening event only", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  await seedEvents(
    a,
    ["ann@example.com", "bob@example.com"],
    [
      { id: "s1", contact: "ann@example.com", type: "sale", at: "2026-01-01T10:00:00Z", amount: 500 },
      {
        id: "s2",
        contact: "ann@example.com",
        type: "payment",
        at: "2026-01-10T10:00:00Z",
        amount: 250.5,
        status: "paid",
      },
      {
        id: "s3",
        contact: "ann@example.com",
        type: "payment",
        at: "2026-01-15T10:00:00Z",
        amount: 99,
        status: "pending",
      },
      {
        id: "s4",
        contact: "ann@example.com",
        type: "payment",
        at: "2026-02-20T10:00:00Z",
        amount: -120,
        status: "refunded",
      },
      {
        id: "s5",
        contact: "ann@example.com",
        type: "payment",
        at: "2026-02-21T10:00:00Z",
        amount: 80,
        status: "disputed",
      },
      {
        id: "t1",
        contact: "bob@example.com",
        type: "sale",
        at: "2026-01-02T10:00:00Z",
        amount: 300,
        baseline: true,
      },
    ],
  );
  await db.tenant(a, (tx) => recomputeSaleCounts(tx, a));
  const totals = await db.admin(a, (tx) =>
    rows<{
      id: string;
      group_revenue: number | null;
      group_refunds: number | null;
      group_disputes: number | null;
    }>(
      tx,
      sql`select id, group_revenue::float8 as group_revenue, group_refunds::float8 as group_refunds,
        group_disputes::float8 as group_disputes from events where account_id = ${a} order by id`,
    ),
  );
  assert.deepEqual(totals, [
    { id: "s1", group_revenue: 750.5, group_refunds: 120, group_disputes: 80 },
    { id: "s2", group_revenue: null, group_refunds: null, group_disputes: null },
    { id: "s3", group_revenue: null, group_refunds: null, group_disputes: null },
    { id: "s4", group_revenue: null, group_refunds: null, group_disputes: null },
    { id: "s5", group_revenue: null, group_refunds: null, group_disputes: null },
    { id: "t1", group_revenue: 300, group_refunds: 0, group_disputes: 0 },
  ]);
});
