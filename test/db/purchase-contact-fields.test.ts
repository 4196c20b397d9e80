import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, MIGRATIONS_DIR, rows } from "../../src/db/client.ts";
import { backend, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * Migration 0041: purchases keep the contact fields /contacts/purchases lists. Purchases written
 * before it hold what they came with; the migration gives them what the list read through the
 * contact: the contact's email, else theirs; their own name, else the contact's. Its statements run
 * again here over rows written the old way (each is idempotent), since a new database has none.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const statements = readFileSync(join(MIGRATIONS_DIR, "0041_purchase_contact_fields.sql"), "utf8")
  .split("--> statement-breakpoint")
  .map((s) => s.trim())
  .filter((s) => s.length > 0);

test(`existing purchases take the contact fields the list showed (${backend})`, async () => {
  const { accountId } = await seedAccount(db);
  const ann = randomUUID();
  const bo = randomUUID();
  const listed = await db.admin(accountId, async (tx) => {
    await tx.execute(sql`insert into contacts (account_id, id, email, phone, name) values
      (${accountId}, ${ann}, 'ann@x.test', null, 'Ann Contact'), (${accountId}, ${bo}, null, '+15550100', null)`);
    // As upsert-purchases wrote them before 0041: the fields the purchase came with.
    await tx.execute(sql`insert into purchases (account_id, id, contact_id, purchase_date, contact_email, contact_name, amount) values
      (${accountId}, 'p-ann', ${ann}, now(), ' ANN@x.test', null, 1),
      (${accountId}, 'p-ann-named', ${ann}, now(), 'ann@x.test', 'On The Invoice', 2),
      (${accountId}, 'p-phone-only', ${bo}, now(), 'bo@x.test', null, 3),
      (${accountId}, 'p-none', null, now(), 'nobody@x.test', 'Nobody', 4)`);
    for (const statement of statements) await tx.execute(sql.raw(statement));
    return rows<{ id: string; contact_email: string | null; contact_name: string | null }>(
      tx,
      sql`select id, contact_email, contact_name from purchases where account_id = ${accountId} order by id`,
    );
  });
  assert.deepEqual(listed, [
    { id: "p-ann", contact_email: "ann@x.test", contact_name: "Ann Contact" },
    { id: "p-ann-named", contact_email: "ann@x.test", contact_name: "On The Invoice" },
    { id: "p-none", contact_email: "nobody@x.test", contact_name: "Nobody" },
    { id: "p-phone-only", contact_email: "bo@x.test", contact_name: null },
  ]);
});
