import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { rotateWebhookSecret, webhookSecret } from "../../src/admin/webhook-secret.ts";
import { createSecretBox } from "../../src/crypto/secret-box.ts";
import { type Database, rows } from "../../src/db/client.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const secrets = createSecretBox([{ id: "t1", key: Buffer.alloc(32, 7) }]);

test("created, stored sealed, readable by the account only, rotated on demand", async () => {
  const a = await seedAccount(db);
  const b = await seedAccount(db);
  const first = await rotateWebhookSecret(db, secrets, { account: a.accountId });
  assert.equal(first.account_id, a.accountId);
  assert.match(first.secret, /^whsec_[A-Za-z0-9_-]{32}$/);
  const stored = await db.admin(a.accountId, (tx) =>
    rows<{ sealed: string }>(
      tx,
      sql`select webhook_secret_sealed as sealed from account_settings where account_id = ${a.accountId}`,
    ),
  );
  assert.ok(stored[0]?.sealed.startsWith("v1.t1."));
  assert.ok(!stored[0]?.sealed.includes(first.secret), "never stored in clear");
  assert.equal(await db.tenant(a.accountId, (tx) => webhookSecret(tx, secrets, a.accountId)), first.secret);
  assert.equal(await db.tenant(b.accountId, (tx) => webhookSecret(tx, secrets, b.accountId)), null);

  // A sealed secret copied into another account's row does not open there.
  await db.admin(b.accountId, (tx) =>
    tx.execute(
      sql`insert into account_settings (account_id, webhook_secret_sealed) values (${b.accountId}, ${stored[0]?.sealed ?? ""})`,
    ),
  );
  await assert.rejects(db.tenant(b.accountId, (tx) => webhookSecret(tx, secrets, b.accountId)));

  const second = await rotateWebhookSecret(db, secrets, { account: a.accountId });
  assert.notEqual(second.secret, first.secret);
  assert.equal(await db.tenant(a.accountId, (tx) => webhookSecret(tx, secrets, a.accountId)), second.secret);
});

test("an unknown account is refused", async () => {
  await assert.rejects(
    rotateWebhookSecret(db, secrets, { account: "00000000-0000-4000-8000-000000000000" }),
    /not found/,
  );
});
