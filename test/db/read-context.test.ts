import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { openPostgres, rows, type Sql, sessionSetting } from "../../src/db/client.ts";
import { backend, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * A read (db.read) sets its tenant context for the connection's session, without a transaction,
 * and on PostgreSQL the next read with the same context on that connection sends nothing first.
 * Whatever ran on the connection in between — another account's read, a transaction, an
 * administration, a query that tuned the session, a failed query — the next user sees its own
 * context and nothing else. The pool hands out the connection used last, so these requests, one at a
 * time, share one connection.
 */

let db: Awaited<ReturnType<typeof openTestDatabase>>;
let a: string;
let b: string;
before(async () => {
  db = await openTestDatabase();
  a = (await seedAccount(db)).accountId;
  b = (await seedAccount(db)).accountId;
});
after(async () => {
  await db.close();
});

interface Seen {
  account: string;
  role: string;
  work_mem: string;
  key_hash: string;
  visible: string[];
}

async function seen(tx: Sql): Promise<Seen> {
  const [row] = await rows<Seen>(
    tx,
    sql`select current_setting('app.account_id', true) as account, current_user as role,
               current_setting('work_mem') as work_mem,
               coalesce(current_setting('app.key_hash', true), '') as key_hash,
               array(select id::text from accounts order by id) as visible`,
  );
  assert.ok(row);
  return row;
}

const readOf = (account: string) => db.read(account, seen);

describe(`reads without a transaction keep to their own context (${backend})`, () => {
  test("one account after another on the same connection", async () => {
    for (const account of [a, a, b, a, b, b]) {
      const got = await readOf(account);
      assert.equal(got.account, account);
      assert.equal(got.role, "ascribe_app");
      assert.deepEqual(got.visible, [account]);
    }
  });

  test("after a transaction, an administration and a key lookup: the role and context set again", async () => {
    await readOf(a);
    const inTenant = await db.tenant(b, seen);
    assert.equal(inTenant.account, b);
    assert.deepEqual(inTenant.visible, [b]);
    assert.deepEqual((await readOf(a)).visible, [a]);

    await readOf(a);
    const asOwner = await db.admin(null, seen);
    assert.notEqual(asOwner.role, "ascribe_app");
    assert.equal(asOwner.account, "");
    const again = await readOf(a);
    assert.equal(again.role, "ascribe_app");
    assert.deepEqual(again.visible, [a]);

    await readOf(a);
    const lookup = await db.keyLookup("0".repeat(64), seen);
    assert.equal(lookup.account, "");
    assert.deepEqual(lookup.visible, []);
    const after = await readOf(a);
    assert.equal(after.key_hash, "");
    assert.deepEqual(after.visible, [a]);
  });

  test("a setting a query made for its request is gone for the next, even of the same account", async () => {
    const defaultMem = (await readOf(a)).work_mem;
    assert.notEqual(defaultMem, "32MB");
    const tuned = await db.read(a, async (tx) => {
      await sessionSetting(tx, "work_mem", "32MB");
      return seen(tx);
    });
    assert.equal(tuned.work_mem, "32MB");
    assert.equal((await readOf(a)).work_mem, defaultMem);
  });

  test("a read that failed leaves nothing behind", async () => {
    await assert.rejects(
      db.read(a, async (tx) => {
        await tx.execute(sql`select 1/0`);
      }),
    );
    assert.deepEqual((await readOf(b)).visible, [b]);
    assert.deepEqual((await readOf(a)).visible, [a]);
  });
});

/** Whether the statement runs in a transaction begun by an earlier one (now() is the BEGIN's time). */
async function inTransaction(tx: Sql): Promise<boolean> {
  const [row] = await rows<{ inside: boolean }>(tx, sql`select now() <> statement_timestamp() as inside`);
  return row?.inside === true;
}

describe("reads behind a transaction-mode pooler (DB_POOL_MODE=transaction)", {
  skip: backend !== "postgres" && "a PostgreSQL setting",
}, () => {
  test("the session pool mode reads outside a transaction", async () => {
    assert.equal(await db.read(a, inTransaction), false);
    assert.equal(await db.tenant(a, inTransaction), true);
  });

  test("every request is a transaction, a query's setting is local to it, and no key is cached", async () => {
    const pooled = await openPostgres(db.url ?? "", 5_000, { poolMode: "transaction" });
    try {
      assert.equal(await pooled.read(a, inTransaction), true);
      const tuned = await pooled.read(a, async (tx) => {
        await sessionSetting(tx, "work_mem", "32MB");
        return seen(tx);
      });
      assert.equal(tuned.work_mem, "32MB");
      assert.deepEqual(tuned.visible, [a]);
      // The setting ended with its transaction: nothing was left on the server connection's session.
      const raw = await pooled.admin(null, (tx) =>
        rows<{ work_mem: string }>(tx, sql`select current_setting('work_mem') as work_mem`),
      );
      assert.notEqual(raw[0]?.work_mem, "32MB");
      assert.equal(pooled.keyChanges().trusted(), false);
    } finally {
      await pooled.close();
    }
  });
});

describe(`raw statements keep dates and times as text (${backend})`, () => {
  // The API prints what PostgreSQL printed; a driver's Date would move instants into the process's
  // time zone and drop microseconds. On PostgreSQL the pool's clients carry these parsers themselves.
  const temporal = sql`select timestamptz '2026-01-02 03:04:05.678901+00' at time zone 'UTC' as at,
    date '2026-01-02' as day, interval '1 day 02:00' as span, 7::int as n`;
  for (const [name, run] of [
    ["a read", (fn: (tx: Sql) => Promise<unknown>) => db.read(a, fn)],
    ["a transaction", (fn: (tx: Sql) => Promise<unknown>) => db.tenant(a, fn)],
  ] as const) {
    test(name, async () => {
      const [row] = (await run((tx) => rows(tx, temporal))) as Record<string, unknown>[];
      assert.deepEqual(row, {
        at: "2026-01-02 03:04:05.678901",
        day: "2026-01-02",
        span: "1 day 02:00:00",
        n: 7,
      });
    });
  }
});
