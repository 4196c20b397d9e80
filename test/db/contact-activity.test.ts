import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * contact_activity (migration 0010): each contact's first and last CRM event and first and last
 * sighting (events and touchpoints), kept by statement triggers. Rows are written here with plain
 * SQL so that nothing but the triggers maintains the table.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface Activity {
  first_event_at: string | null;
  last_event_at: string | null;
  first_seen_at: string | null;
  last_seen_at: string | null;
}

const day = (d: string) => `2026-03-${d}T10:00:00.000Z`;

async function activity(tx: Sql, accountId: string, contactId: string): Promise<Activity | null> {
  const found = await rows<Activity>(
    tx,
    sql`select to_char(first_event_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as first_event_at,
               to_char(last_event_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_event_at,
               to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as first_seen_at,
               to_char(last_seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_seen_at
        from contact_activity where account_id = ${accountId} and contact_id = ${contactId}::uuid`,
  );
  return found[0] ?? null;
}

async function contact(tx: Sql, accountId: string, email: string): Promise<string> {
  const id = randomUUID();
  await tx.execute(sql`insert into contacts (account_id, id, email) values (${accountId}, ${id}, ${email})`);
  return id;
}

async function event(tx: Sql, accountId: string, contactId: string, id: string, at: string) {
  await tx.execute(sql`insert into events (account_id, id, contact_id, event_type, event_datetime, origin)
                       values (${accountId}, ${id}, ${contactId}, 'lead', ${at}::timestamptz, 'import')`);
}

async function touch(tx: Sql, accountId: string, contactId: string | null, at: string): Promise<string> {
  const id = randomUUID();
  await tx.execute(sql`insert into touchpoints (account_id, id, contact_id, kind, event_type, occurred_at)
                       values (${accountId}, ${id}, ${contactId}, 'web', 'page_view', ${at}::timestamptz)`);
  return id;
}

describe("contact_activity", () => {
  test("a new contact has its row at once, empty until it is seen", async () => {
    const { accountId } = await seedAccount(db);
    await db.admin(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      assert.deepEqual(await activity(tx, accountId, ann), {
        first_event_at: null,
        last_event_at: null,
        first_seen_at: null,
        last_seen_at: null,
      });
    });
  });

  test("events and touchpoints widen the bounds; sightings include both", async () => {
    const { accountId } = await seedAccount(db);
    await db.admin(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      await event(tx, accountId, ann, "e1", day("05"));
      await event(tx, accountId, ann, "e2", day("09"));
      await touch(tx, accountId, ann, day("02"));
      await touch(tx, accountId, ann, day("07"));
      await touch(tx, accountId, null, day("20"));
      assert.deepEqual(await activity(tx, accountId, ann), {
        first_event_at: day("05"),
        last_event_at: day("09"),
        first_seen_at: day("02"),
        last_seen_at: day("09"),
      });
      await touch(tx, accountId, ann, day("12"));
      assert.equal((await activity(tx, accountId, ann))?.last_seen_at, day("12"));
      assert.equal((await activity(tx, accountId, ann))?.last_event_at, day("09"));
    });
  });

  test("updates and deletes may narrow the bounds: recomputed from what is left", async () => {
    const { accountId } = await seedAccount(db);
    await db.admin(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      await event(tx, accountId, ann, "e1", day("05"));
      await event(tx, accountId, ann, "e2", day("09"));
      await tx.execute(
        sql`update events set event_datetime = ${day("06")}::timestamptz where account_id = ${accountId} and id = 'e2'`,
      );
      assert.deepEqual(await activity(tx, accountId, ann), {
        first_event_at: day("05"),
        last_event_at: day("06"),
        first_seen_at: day("05"),
        last_seen_at: day("06"),
      });
      await tx.execute(sql`delete from events where account_id = ${accountId} and id = 'e1'`);
      assert.equal((await activity(tx, accountId, ann))?.first_event_at, day("06"));
      await tx.execute(sql`delete from events where account_id = ${accountId}`);
      assert.deepEqual(await activity(tx, accountId, ann), {
        first_event_at: null,
        last_event_at: null,
        first_seen_at: null,
        last_seen_at: null,
      });
    });
  });

  test("a touchpoint moved to another contact (identity stitching) updates both", async () => {
    const { accountId } = await seedAccount(db);
    await db.admin(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      const bob = await contact(tx, accountId, "bob@x.test");
      await touch(tx, accountId, ann, day("03"));
      const moved = await touch(tx, accountId, ann, day("15"));
      await tx.execute(
        sql`update touchpoints set contact_id = ${bob}::uuid where account_id = ${accountId} and id = ${moved}::uuid`,
      );
      assert.equal((await activity(tx, accountId, ann))?.last_seen_at, day("03"));
      assert.equal((await activity(tx, accountId, bob))?.first_seen_at, day("15"));
      assert.equal((await activity(tx, accountId, bob))?.last_seen_at, day("15"));
    });
  });

  test("a deleted contact takes its row with it; other accounts' rows are untouched", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    const annA = await db.admin(a.accountId, async (tx) => {
      const id = await contact(tx, a.accountId, "ann@x.test");
      await event(tx, a.accountId, id, "e1", day("05"));
      return id;
    });
    const annB = await db.admin(b.accountId, async (tx) => {
      const id = await contact(tx, b.accountId, "ann@x.test");
      await event(tx, b.accountId, id, "e1", day("08"));
      return id;
    });
    await db.admin(a.accountId, async (tx) => {
      await tx.execute(sql`delete from events where account_id = ${a.accountId}`);
      await tx.execute(sql`delete from contacts where account_id = ${a.accountId}`);
      assert.equal(await activity(tx, a.accountId, annA), null);
    });
    await db.admin(b.accountId, async (tx) => {
      assert.equal((await activity(tx, b.accountId, annB))?.last_event_at, day("08"));
    });
  });
});
