import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
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
  assert.match(plan, /Index Scan Backward using touchpoints_ad_touch_idx on touchpoints/, plan);
  assert.match(plan, /Index Cond: \(\(account_id = \$1\) AND \(contact_id = \$2\)/, plan);
  assert.doesNotMatch(plan, /Sort/, plan);
});
