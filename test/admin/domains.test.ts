import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { addDomain } from "../../src/admin/domains.ts";
import type { Database } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

test("a host is registered once, normalized, and belongs to one account", async () => {
  const a = await seedAccount(db);
  const b = await seedAccount(db);
  assert.deepEqual(await addDomain(db, { account: a.accountId, host: " Track.Example.COM " }), {
    account_id: a.accountId,
    host: "track.example.com",
  });
  assert.deepEqual(await addDomain(db, { account: a.accountId, host: "track.example.com" }), {
    account_id: a.accountId,
    host: "track.example.com",
  });
  await assert.rejects(
    addDomain(db, { account: b.accountId, host: "track.example.com" }),
    /registered by another account/,
  );
  for (const bad of [
    "localhost",
    "track..example.com",
    "-x.example.com",
    "track.example.com/path",
    "ex ample.com",
  ]) {
    await assert.rejects(addDomain(db, { account: a.accountId, host: bad }), /host name/, bad);
  }
});
