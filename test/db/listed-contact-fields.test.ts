import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, MIGRATIONS_DIR, rows } from "../../src/db/client.ts";
import { backend, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * Migrations 0041 and 0042: purchases and customer_totals keep the contact fields /contacts/purchases
 * and /contacts/customers list. Rows written before them lack those; each migration gives them what
 * its list read through the contact. Their filling statements run again here over rows written the
 * old way (each is idempotent), since a new database has none.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

/** A migration's statements, but those adding a column (already there). */
const statementsOf = (file: string) =>
  readFileSync(join(MIGRATIONS_DIR, file), "utf8")
    .split("--> statement-breakpoint")
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !/^ALTER TABLE \S+ ADD COLUMN/m.test(s));

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
    for (const statement of statementsOf("0041_purchase_contact_fields.sql"))
      await tx.execute(sql.raw(statement));
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

test(`existing customers take the contact fields the list showed (${backend})`, async () => {
  const { accountId } = await seedAccount(db);
  const [named, parts, bare] = [randomUUID(), randomUUID(), randomUUID()];
  const listed = await db.admin(accountId, async (tx) => {
    await tx.execute(sql`insert into contacts (account_id, id, email, phone, name, first_name, last_name) values
      (${accountId}, ${named}, 'cy@x.test', '+15550101', 'Cy Named', 'Ignored', 'Parts'),
      (${accountId}, ${parts}, 'di@x.test', null, null, 'Di', 'Parts'),
      (${accountId}, ${bare}, null, '+15550102', null, null, null)`);
    await tx.execute(sql`insert into customers (account_id, id, contact_id) values
      (${accountId}, ${randomUUID()}, ${named}), (${accountId}, ${randomUUID()}, ${parts}),
      (${accountId}, ${randomUUID()}, ${bare})`);
    // As the rows were before 0042.
    await tx.execute(sql`update customer_totals set contact_email = null, contact_name = null, contact_phone = null
      where account_id = ${accountId}`);
    for (const statement of statementsOf("0042_customer_contact_fields.sql"))
      await tx.execute(sql.raw(statement));
    return rows<{
      contact_id: string;
      contact_email: string | null;
      contact_name: string | null;
      contact_phone: string | null;
    }>(
      tx,
      sql`select contact_id, contact_email, contact_name, contact_phone from customer_totals
          where account_id = ${accountId}`,
    );
  });
  const byContact = new Map(
    listed.map((r) => [r.contact_id, [r.contact_email, r.contact_name, r.contact_phone]]),
  );
  assert.deepEqual(byContact.get(named), ["cy@x.test", "Cy Named", "+15550101"]);
  assert.deepEqual(byContact.get(parts), ["di@x.test", "Di Parts", null]);
  assert.deepEqual(byContact.get(bare), [null, null, "+15550102"]);
  assert.equal(listed.length, 3);
});
