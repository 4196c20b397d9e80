import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { createAccount, listAccounts } from "../../src/admin/accounts.ts";
import { addDomain, listDomains, removeDomain } from "../../src/admin/domains.ts";
import { type Database, rows } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test("accounts list: every account with its plan, timezone, currency and creation time", async () => {
  const first = await createAccount(db, {
    name: "Acme",
    plan: "free",
    timezone: "Europe/Paris",
    currency: "USD",
  });
  const second = await createAccount(db, { name: "Globex" });
  const listed = await listAccounts(db);
  const ours = listed.filter((a) => a.id === first.id || a.id === second.id);
  assert.deepEqual(
    ours.map(({ created_at, ...a }) => a),
    [
      { id: first.id, name: "Acme", plan: "free", timezone: "Europe/Paris", currency: "USD" },
      { id: second.id, name: "Globex", plan: "pro", timezone: "UTC", currency: "EUR" },
    ],
  );
  for (const a of ours) assert.match(a.created_at, ISO);
});

test("the listing policy: the administration role sees no account without the setting, all with it", async () => {
  const seeded = await seedAccount(db);
  // As the role a non-owner administration login acts through (no superuser's bypass of RLS).
  const visible = (listing: boolean) =>
    db.admin(null, async (tx) => {
      await tx.execute(sql`select set_config('role', 'ascribe_admin', true)`);
      if (listing) await tx.execute(sql`select set_config('app.account_listing', 'on', true)`);
      const found = await rows<{ id: string }>(tx, sql`select id::text as id from accounts`);
      return found.map((a) => a.id);
    });
  assert.deepEqual(await visible(false), []);
  assert.ok((await visible(true)).includes(seeded.accountId));
});

test("the request role never gets the listing policy, whatever it sets", async () => {
  const seeded = await seedAccount(db);
  const other = await seedAccount(db);
  const seen = await db.tenant(seeded.accountId, async (tx) => {
    await tx.execute(sql`select set_config('app.account_listing', 'on', true)`);
    return rows<{ id: string }>(tx, sql`select id::text as id from accounts`);
  });
  assert.deepEqual(
    seen.map((a) => a.id),
    [seeded.accountId],
  );
  assert.ok(!seen.some((a) => a.id === other.accountId));
});

test("domains list and remove: the account's own hosts; removing another's or an unknown one is not_found", async () => {
  const a = await seedAccount(db);
  const b = await seedAccount(db);
  assert.deepEqual(await listDomains(db, { account: a.accountId }), []);
  await addDomain(db, { account: a.accountId, host: "track.acme-list.test" });
  await addDomain(db, { account: a.accountId, host: "go.acme-list.test" });
  await addDomain(db, { account: b.accountId, host: "track.globex-list.test" });
  const listed = await listDomains(db, { account: a.accountId });
  assert.deepEqual(listed.map((d) => [d.account_id, d.host]).sort(), [
    [a.accountId, "go.acme-list.test"],
    [a.accountId, "track.acme-list.test"],
  ]);
  for (const d of listed) assert.match(d.created_at, ISO);

  assert.deepEqual(await removeDomain(db, { account: a.accountId, host: " Track.ACME-list.test " }), {
    account_id: a.accountId,
    host: "track.acme-list.test",
    removed: true,
  });
  assert.deepEqual(
    (await listDomains(db, { account: a.accountId })).map((d) => d.host),
    ["go.acme-list.test"],
  );
  await assert.rejects(removeDomain(db, { account: a.accountId, host: "track.acme-list.test" }), {
    code: "not_found",
  });
  await assert.rejects(removeDomain(db, { account: a.accountId, host: "track.globex-list.test" }), {
    code: "not_found",
  });
  assert.deepEqual(
    (await listDomains(db, { account: b.accountId })).map((d) => d.host),
    ["track.globex-list.test"],
  );
});
