import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { saleEventsQuery } from "../../src/queries/sale-events.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * The ad of record's fallback (ascribe_last_ad_touch) runs once per event written, inside the
 * events trigger, whose plan PL/pgSQL may cache as a generic plan made on the first writes, while
 * the tables are nearly empty. That plan must still go through the contact: one made to walk the
 * account's touchpoints from the instant back (touchpoints_occurred_idx orders them the same way)
 * costs a scan per event once the account has grown, and a demo at scale 10 on PostgreSQL ran into
 * the statement timeout.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

test("a contact's last ad touch: a generic plan made on empty tables probes the contact's ad touches", async () => {
  const { accountId } = await seedAccount(db);
  const plan = await db.tenant(accountId, async (tx) => {
    await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
    await tx.execute(
      sql.raw(
        "prepare last_ad_touch(uuid, uuid, timestamptz) as select * from ascribe_last_ad_touch($1, $2, $3)",
      ),
    );
    const lines = await rows<{ "QUERY PLAN": string }>(
      tx,
      sql.raw(
        `explain (costs off) execute last_ad_touch('${accountId}', '00000000-0000-4000-8000-000000000001', '2026-03-01')`,
      ),
    );
    await tx.execute(sql.raw("deallocate last_ad_touch"));
    return lines.map((l) => l["QUERY PLAN"]).join("\n");
  });
  // Index-only since migration 0036 put the ad columns in the index.
  assert.match(plan, /Index (Only )?Scan Backward using touchpoints_ad_touch_idx on touchpoints/, plan);
  assert.match(plan, /Index Cond: \(\(account_id = \$1\) AND \(contact_id = \$2\)/, plan);
  assert.doesNotMatch(plan, /Sort/, plan);
});

/*
 * Sale counting reads the sales of the contacts an ingest touched. On a fresh database the
 * statistics still describe empty tables while the first thousands of sales arrive: the read must
 * still go through the contacts, not walk every sale of the account by type.
 */
test("sale counting's read of some contacts goes through the contacts while the statistics describe an empty table", async () => {
  const { accountId } = await seedAccount(db);
  await db.admin(accountId, (tx) => tx.execute(sql`analyze events`));
  const plan = await db.tenant(accountId, async (tx) => {
    await tx.execute(sql`
      insert into contacts (account_id, id)
      select ${accountId}, ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid
      from generate_series(1, 1500) n`);
    await tx.execute(sql`
      insert into events (account_id, id, contact_id, event_type, event_datetime, origin)
      select ${accountId}, 'sale-' || n, ('00000000-0000-4000-8000-' || lpad((n % 1500 + 1)::text, 12, '0'))::uuid,
             'sale', timestamptz '2026-03-01' + n * interval '1 minute', 'import'
      from generate_series(1, 3000) n`);
    const lines = await rows<{ "QUERY PLAN": string }>(
      tx,
      sql`explain (costs off) ${saleEventsQuery(accountId, {
        contactIds: ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"],
      })}`,
    );
    return lines.map((l) => l["QUERY PLAN"]).join("\n");
  });
  assert.match(plan, /events_contact_idx/, plan);
  assert.doesNotMatch(plan, /events_type_datetime_idx/, plan);
});
