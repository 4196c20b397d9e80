import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * Migration 0038: touchpoints' contact activity on UPDATE. A touchpoint that only joins a contact
 * (from none, at the same instant: collect adopting a visitor's earlier touches) widens the contact's
 * seen bounds by a merge, without recomputing the contact from its events and touchpoints; any other
 * move still recomputes (it may narrow a bound). Counted with track_functions: the recomputation is
 * ascribe_refresh_contact_activity.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const at = (d: string) => `2026-03-${d}T10:00:00.000Z`;

async function seen(tx: Sql, accountId: string, contactId: string) {
  const found = await rows<{ first: string; last: string }>(
    tx,
    sql`select to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD') as first,
               to_char(last_seen_at at time zone 'UTC', 'YYYY-MM-DD') as last
        from contact_activity where account_id = ${accountId} and contact_id = ${contactId}::uuid`,
  );
  return found[0] ?? null;
}

async function refreshCalls(tx: Sql): Promise<number> {
  const found = await rows<{ calls: number }>(
    tx,
    sql`select coalesce(sum(calls), 0)::int as calls from pg_stat_xact_user_functions
        where funcname = 'ascribe_refresh_contact_activity'`,
  );
  return found[0]?.calls ?? 0;
}

async function contact(tx: Sql, accountId: string, email: string): Promise<string> {
  const id = randomUUID();
  await tx.execute(sql`insert into contacts (account_id, id, email) values (${accountId}, ${id}, ${email})`);
  return id;
}

async function touch(tx: Sql, accountId: string, contactId: string | null, visitor: string, day: string) {
  await tx.execute(sql`insert into touchpoints (account_id, id, contact_id, visitor_id, kind, event_type, occurred_at)
                       values (${accountId}, ${randomUUID()}, ${contactId}, ${visitor}, 'web', 'page_view',
                               ${at(day)}::timestamptz)`);
}

describe("touchpoints' contact activity on update (0038)", () => {
  test("a visitor adopted by its contact widens the seen bounds without a recomputation", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, async (tx) => {
      await tx.execute(sql`set local track_functions = 'pl'`);
      const ann = await contact(tx, a.accountId, "ann@example.com");
      await touch(tx, a.accountId, null, "visitor-1", "02");
      await touch(tx, a.accountId, null, "visitor-1", "20");
      await touch(tx, a.accountId, ann, "visitor-1", "10");
      assert.deepEqual(await seen(tx, a.accountId, ann), { first: "2026-03-10", last: "2026-03-10" });
      const before = await refreshCalls(tx);
      await tx.execute(sql`update touchpoints set contact_id = ${ann}
                           where account_id = ${a.accountId} and visitor_id = 'visitor-1' and contact_id is null`);
      assert.deepEqual(await seen(tx, a.accountId, ann), { first: "2026-03-02", last: "2026-03-20" });
      assert.equal((await refreshCalls(tx)) - before, 0);
    });
  });

  test("a touchpoint moved from one contact to another recomputes both: the one it left narrows", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, async (tx) => {
      await tx.execute(sql`set local track_functions = 'pl'`);
      const ann = await contact(tx, a.accountId, "ann@example.com");
      const bob = await contact(tx, a.accountId, "bob@example.com");
      await touch(tx, a.accountId, ann, "visitor-a", "05");
      await touch(tx, a.accountId, ann, "visitor-b", "25");
      await touch(tx, a.accountId, bob, "visitor-c", "15");
      const before = await refreshCalls(tx);
      await tx.execute(sql`update touchpoints set contact_id = ${bob}
                           where account_id = ${a.accountId} and visitor_id = 'visitor-b'`);
      assert.deepEqual(await seen(tx, a.accountId, ann), { first: "2026-03-05", last: "2026-03-05" });
      assert.deepEqual(await seen(tx, a.accountId, bob), { first: "2026-03-15", last: "2026-03-25" });
      assert.equal((await refreshCalls(tx)) - before, 1);
    });
  });

  test("an anonymous touchpoint that joins a contact at another instant is recomputed, not merged", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, async (tx) => {
      await tx.execute(sql`set local track_functions = 'pl'`);
      const ann = await contact(tx, a.accountId, "ann@example.com");
      await touch(tx, a.accountId, ann, "visitor-a", "10");
      await touch(tx, a.accountId, null, "visitor-x", "12");
      const before = await refreshCalls(tx);
      await tx.execute(sql`update touchpoints set contact_id = ${ann}, occurred_at = ${at("01")}::timestamptz
                           where account_id = ${a.accountId} and visitor_id = 'visitor-x'`);
      assert.deepEqual(await seen(tx, a.accountId, ann), { first: "2026-03-01", last: "2026-03-10" });
      assert.equal((await refreshCalls(tx)) - before, 1);
    });
  });
});
