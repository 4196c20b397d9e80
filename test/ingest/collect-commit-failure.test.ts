import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { buildApp } from "../../src/app.ts";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { createAuditWriter } from "../../src/http/audit.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { createCollectAccounts } from "../../src/ingest/collect-accounts.ts";
import { keyStoreFor } from "../../src/main.ts";
import { routes } from "../../src/routes/index.ts";
import {
  createTestFiles,
  openTestDatabase,
  seedAccount,
  silentLogger,
  testSecrets,
} from "../helpers/harness.ts";

/*
 * A beacon is acknowledged only after a commit that holds it. Here the COMMIT itself fails: a
 * constraint trigger created by this test on its own database, DEFERRABLE INITIALLY DEFERRED, raises
 * at commit for every touchpoint of a "doomed" visitor (visitor ids starting with `doomed`).
 */
let db: Database;
/** Each tenant transaction's beacon count (the writer's batches and their retries), in order. */
const transactions: { beacons: number; committed: boolean }[] = [];
let counted: Database;

before(async () => {
  db = await openTestDatabase();
  await db.admin(null, (tx) =>
    tx.execute(sql`
      create function test_doomed_at_commit() returns trigger language plpgsql as $fn$
      begin
        if new.visitor_id like 'doomed%' then
          raise exception 'doomed visitor % refused at commit', new.visitor_id;
        end if;
        return null;
      end $fn$`),
  );
  await db.admin(null, (tx) =>
    tx.execute(sql`
      create constraint trigger test_doomed_at_commit after insert on touchpoints
      deferrable initially deferred for each row execute function test_doomed_at_commit()`),
  );
  counted = Object.assign(Object.create(db) as Database, {
    tenant: async <T>(accountId: string, fn: (tx: Sql) => Promise<T>) => {
      const entry = { beacons: 0, committed: false };
      transactions.push(entry);
      const result = await db.tenant(accountId, async (tx) => {
        entry.beacons = (
          await rows<{ n: number }>(tx, sql`select count(*)::int as n from beacon_receipts`)
        )[0]?.n as number;
        const value = await fn(tx);
        // Receipts claimed by this transaction: the beacons it holds.
        entry.beacons =
          ((await rows<{ n: number }>(tx, sql`select count(*)::int as n from beacon_receipts`))[0]
            ?.n as number) - entry.beacons;
        return value;
      });
      entry.committed = true;
      return result;
    },
  });
});
after(async () => {
  await db.close();
});

async function appOn(database: Database) {
  const counters = createMemoryCounterStore(() => 1_800_000_030_000);
  const audit = createAuditWriter(db, silentLogger, { intervalMs: 50 });
  const app = await buildApp({
    db: database,
    secrets: testSecrets,
    keys: keyStoreFor(db),
    counters,
    audit,
    logger: silentLogger,
    routes,
    files: createTestFiles(),
    siteUrl: () => "http://localhost:3000",
    collect: { accounts: createCollectAccounts(db) },
  });
  await app.ready();
  return Object.assign(app, {
    async shut() {
      await app.close();
      await audit.close();
    },
  });
}

let ip = 0;
function beacons(
  app: Awaited<ReturnType<typeof appOn>>,
  clientKey: string,
  visitors: readonly string[],
  tag: string,
) {
  return Promise.all(
    visitors.map((visitor, i) => {
      ip += 1;
      return app.inject({
        method: "POST",
        url: "/api/collect",
        headers: { "content-type": "text/plain" },
        payload: JSON.stringify({
          type: i % 3 === 2 ? "form_submit" : "page_view",
          client_key: clientKey,
          id: `${tag}-${String(i).padStart(3, "0")}-0123456789abcdef`,
          visitor_id: visitor,
          url: "https://example.com/",
          ...(i % 3 === 2 ? { contact: { email: `${visitor}@example.com` } } : {}),
        }),
        remoteAddress: `10.70.0.${ip % 250}`,
      });
    }),
  );
}

const stored = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ external_id: string }>(
      tx,
      sql`select external_id from touchpoints where account_id = ${accountId} order by external_id`,
    ),
  );
const receipts = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ n: number }>(
      tx,
      sql`select count(*)::int as n from beacon_receipts where account_id = ${accountId}`,
    ),
  );
const contacts = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ n: number }>(tx, sql`select count(*)::int as n from contacts where account_id = ${accountId}`),
  );

describe("POST /api/collect: a batch whose COMMIT fails", () => {
  test("a batch of beacons whose commit fails answers non-2xx for every beacon in it and stores none", async () => {
    const app = await appOn(counted);
    const a = await seedAccount(db);
    // The account is looked up first, so that the 9 reach the writer together, in one batch.
    const [warm] = await beacons(app, a.clientKey, ["visitor-warm1"], "warm");
    assert.equal(warm?.statusCode, 204);
    transactions.length = 0;

    const visitors = Array.from({ length: 9 }, (_, i) => `doomed-visitor-${i}`);
    const answers = await beacons(app, a.clientKey, visitors, "doom");

    assert.deepEqual(
      answers.map((r) => r.statusCode >= 500),
      visitors.map(() => true),
      `statuses ${answers.map((r) => r.statusCode).join(",")}`,
    );
    // The batch held all 9 (written, then refused at COMMIT), and nothing else committed.
    assert.equal(transactions[0]?.beacons, 9);
    assert.equal(transactions[0]?.committed, false);
    assert.deepEqual(
      transactions.filter((t) => t.committed),
      [],
    );
    assert.deepEqual(
      (await stored(a.accountId)).map((t) => t.external_id),
      ["beacon:warm-000-0123456789abcdef"],
    );
    assert.deepEqual(await receipts(a.accountId), [{ n: 1 }]);
    assert.deepEqual(await contacts(a.accountId), [{ n: 0 }]);
    // The tracking script's resends, once the database accepts them, are stored once each.
    await db.admin(null, (tx) =>
      tx.execute(sql`alter table touchpoints disable trigger test_doomed_at_commit`),
    );
    try {
      const again = await beacons(app, a.clientKey, visitors, "doom");
      assert.deepEqual(
        again.map((r) => r.statusCode),
        visitors.map(() => 204),
      );
    } finally {
      await db.admin(null, (tx) =>
        tx.execute(sql`alter table touchpoints enable trigger test_doomed_at_commit`),
      );
    }
    assert.equal((await stored(a.accountId)).length, 10);
    await app.shut();
  });

  test("one doomed beacon in a batch: the others are acknowledged after the commit of a smaller batch that holds them", async () => {
    const app = await appOn(counted);
    const a = await seedAccount(db);
    const [warm] = await beacons(app, a.clientKey, ["visitor-warm2"], "warn");
    assert.equal(warm?.statusCode, 204);
    transactions.length = 0;

    const visitors = Array.from({ length: 8 }, (_, i) => (i === 5 ? "doomed-one" : `visitor-fine-${i}`));
    const answers = await beacons(app, a.clientKey, visitors, "half");
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [204, 204, 204, 204, 204, 502, 204, 204],
    );
    // 8 refused at commit, then halves in arrival order: 4 committed; 4 refused; 2 committed; 2
    // refused; its neighbour alone committed, the doomed one alone refused; the last 2 committed.
    assert.deepEqual(
      transactions.map((t) => [t.beacons, t.committed]),
      [
        [8, false],
        [4, true],
        [4, false],
        [2, false],
        [1, true],
        [1, false],
        [2, true],
      ],
    );
    assert.deepEqual(
      (await stored(a.accountId)).map((t) => t.external_id),
      [
        "beacon:half-000-0123456789abcdef",
        "beacon:half-001-0123456789abcdef",
        "beacon:half-002-0123456789abcdef",
        "beacon:half-003-0123456789abcdef",
        "beacon:half-004-0123456789abcdef",
        "beacon:half-006-0123456789abcdef",
        "beacon:half-007-0123456789abcdef",
        "beacon:warn-000-0123456789abcdef",
      ],
    );
    await app.shut();
  });
});
