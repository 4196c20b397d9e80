import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { runImport } from "../../src/import/run-import.ts";
import { openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

/*
 * Purchases are written set-based, a batch in two statements (src/queries/upsert-purchases.ts):
 * within one batch, the result must be that of writing the records one after the other.
 */

let db: Database;
let dir: string;
before(async () => {
  db = await openTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "ascribe-purchases-batch-"));
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("an id twice keeps its last version; a customer keeps the last terms given; one contact per buyer", async () => {
  // The first p1 is replaced by the second before any write (its name "Ann X" is never stored); the
  // contact gets its name from p2, as a second purchase fills a name the first did not give.
  const { accountId } = await seedAccount(db);
  const file = join(dir, "purchases.jsonl");
  const at = "2026-03-01T10:00:00Z";
  const records = [
    { id: "p1", purchase_date: at, contact_email: "Ann@Example.com", contact_name: "Ann X", amount: 10 },
    { id: "p1", purchase_date: at, contact_email: "ann@example.com", amount: 12 },
    {
      id: "p2",
      purchase_date: at,
      contact_email: "ann@example.com",
      contact_name: "Ann",
      amount: 5,
      commission_status: "active",
    },
    { id: "p3", purchase_date: at, contact_email: "ann@example.com", amount: 7 },
    { id: "p4", purchase_date: at, contact_email: "bob@example.com", amount: 3, commission_status: "none" },
  ];
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const summary = await runImport(db, testSecrets, { kind: "purchases", account: accountId, file });
  assert.deepEqual(
    {
      imported: summary.imported,
      updated: summary.updated,
      skipped: summary.skipped,
      errors: summary.errors,
    },
    { imported: 4, updated: 0, skipped: 1, errors: [] },
  );
  const stored = await db.admin(accountId, (tx) =>
    rows<{ id: string; amount: number; email: string; name: string | null }>(
      tx,
      sql`select p.id, p.amount::float8 as amount, c.email, c.name
          from purchases p join contacts c on c.account_id = p.account_id and c.id = p.contact_id
          where p.account_id = ${accountId} order by p.id`,
    ),
  );
  assert.deepEqual(stored, [
    { id: "p1", amount: 12, email: "ann@example.com", name: "Ann" },
    { id: "p2", amount: 5, email: "ann@example.com", name: "Ann" },
    { id: "p3", amount: 7, email: "ann@example.com", name: "Ann" },
    { id: "p4", amount: 3, email: "bob@example.com", name: null },
  ]);
  const customers = await db.admin(accountId, (tx) =>
    rows<{ email: string; status: string | null }>(
      tx,
      sql`select c.email, k.commission_status as status
          from customers k join contacts c on c.account_id = k.account_id and c.id = k.contact_id
          where k.account_id = ${accountId} order by c.email`,
    ),
  );
  assert.deepEqual(customers, [
    { email: "ann@example.com", status: "active" },
    { email: "bob@example.com", status: "none" },
  ]);
});
