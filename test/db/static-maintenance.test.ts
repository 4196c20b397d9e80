import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { backend, openTestDatabase } from "../helpers/harness.ts";

/*
 * The events' per-statement maintenance is written into its functions' bodies (migration 0044), so
 * PostgreSQL plans it once per connection instead of at every statement. The rollup's text has one
 * source, ascribe_report_rollup_sql, which the rebuild runs: the trigger must hold what it renders
 * today, or a later change of the rollup would reach the rebuild and not the trigger.
 */

let db: Awaited<ReturnType<typeof openTestDatabase>>;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const bodyOf = async (name: string) => {
  const [found] = await db.admin(null, (tx) =>
    rows<{ body: string }>(tx, sql`select prosrc as body from pg_proc where proname = ${name}`),
  );
  assert.ok(found, name);
  return found.body;
};

describe(`the events' maintenance statements are planned once per connection (${backend})`, () => {
  test("the rollup trigger holds the rollup's statements as ascribe_report_rollup_sql renders them", async () => {
    const [rendered] = await db.admin(null, (tx) =>
      rows<{ inserted: string; deleted: string; updated: string }>(
        tx,
        sql`select
          ascribe_report_rollup_sql('SELECT n.*, 1 AS sign FROM new_rows n', 'report_rollup_delta') as inserted,
          ascribe_report_rollup_sql('SELECT o.*, -1 AS sign FROM old_rows o', 'report_rollup_delta') as deleted,
          ascribe_report_rollup_sql(
            'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o',
            'report_rollup_delta') as updated`,
      ),
    );
    assert.ok(rendered);
    const body = await bodyOf("ascribe_events_rollup");
    assert.doesNotMatch(body, /\bEXECUTE\b/);
    for (const statement of [rendered.inserted, rendered.deleted, rendered.updated]) {
      assert.ok(body.includes(statement), "a statement of the rollup is missing from the trigger");
    }
  });

  test("customer totals and, for a list of contacts, milestones run no EXECUTE", async () => {
    assert.doesNotMatch(await bodyOf("ascribe_refresh_customer_totals"), /\bEXECUTE\b/);
    const milestones = await bodyOf("ascribe_refresh_contact_milestones");
    const listBranch = milestones.slice(milestones.indexOf("\n  ELSE\n"));
    assert.ok(listBranch.length < milestones.length);
    assert.doesNotMatch(listBranch, /\bEXECUTE\b/);
    assert.match(listBranch, /unnest\(contact_ids\)/);
  });
});
