import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { foldBacklog } from "../../src/import/fold-backlog.ts";
import { ingestCrmEvents } from "../../src/ingest/ingest-events.ts";
import { foldReportRollupChunk } from "../../src/queries/fold-report-rollup.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * A bulk load's backlog is folded one chunk per transaction, the chunk halved after a statement
 * timeout: in one transaction, a cancelled call lost the whole fold and `ascribe demo --scale 100`
 * failed at its last step on a loaded machine. The timeouts here are the database's own error
 * (SQLSTATE 57014, raised by the server), put in front of the real fold.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

async function raise(tx: Sql, code: string): Promise<never> {
  await tx.execute(
    sql.raw(`do $$ begin raise exception 'raised by the test' using errcode = '${code}'; end $$`),
  );
  throw new Error("unreachable");
}

/** An account with 12 leads over three days written and not folded: deltas pending. */
async function accountWithBacklog(): Promise<string> {
  const { accountId } = await seedAccount(db);
  const leads = Array.from({ length: 12 }, (_, i) => ({
    id: `lead-${i}`,
    event_type: "lead" as const,
    event_datetime: `2026-03-0${1 + (i % 3)}T10:00:00Z`,
    contact_email: `p${i}@example.com`,
  }));
  await db.tenant(accountId, (tx) => ingestCrmEvents(tx, accountId, leads, { origin: "import" }));
  return accountId;
}

async function pendingAndLeads(accountId: string) {
  const [found] = await db.admin(accountId, (tx) =>
    rows<{ pending: number; leads: number }>(
      tx,
      sql`select (select count(*)::int from report_rollup_delta where account_id = ${accountId})
               + (select count(*)::int from touchpoint_rollup_delta where account_id = ${accountId}) as pending,
             (select coalesce(sum(leads), 0)::int from report_rollup_daily
              where account_id = ${accountId} and dim = 'source') as leads`,
    ),
  );
  return found;
}

describe("folding a backlog", () => {
  test("timeouts halve the chunk until a call fits; every delta is folded", async () => {
    const accountId = await accountWithBacklog();
    assert.ok(((await pendingAndLeads(accountId))?.pending ?? 0) > 0, "deltas pending before");
    const asked: number[] = [];
    await foldBacklog(db, accountId, {
      chunk: 8,
      minChunk: 1,
      step: async (tx, account, { chunk }) => {
        asked.push(chunk);
        if (chunk > 2) return raise(tx, "57014");
        return foldReportRollupChunk(tx, account, { chunk });
      },
    });
    // 8 and 4 timed out; then chunks of 2 until the logs are empty.
    assert.deepEqual(asked.slice(0, 3), [8, 4, 2]);
    assert.ok(asked.slice(2).every((c) => c === 2));
    assert.deepEqual(await pendingAndLeads(accountId), { pending: 0, leads: 12 });
  });

  test("an error that no smaller chunk fixes stops at once, and so does a timeout at the least chunk", async () => {
    const accountId = await accountWithBacklog();
    let calls = 0;
    await assert.rejects(
      foldBacklog(db, accountId, {
        step: (tx) => {
          calls += 1;
          return raise(tx, "22023");
        },
      }),
      /raised by the test/,
    );
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(
      foldBacklog(db, accountId, {
        chunk: 4,
        minChunk: 2,
        step: (tx) => {
          calls += 1;
          return raise(tx, "57014");
        },
      }),
      /raised by the test/,
    );
    assert.equal(calls, 2, "4, then 2, the least");
    // Nothing was folded by the failed calls; a plain fold then folds all of it.
    await foldBacklog(db, accountId);
    assert.deepEqual(await pendingAndLeads(accountId), { pending: 0, leads: 12 });
  });
});
