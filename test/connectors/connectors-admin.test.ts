import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { addConnector, listConnectors, removeConnector, testConnector } from "../../src/admin/connectors.ts";
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
const otherKeys = createSecretBox([{ id: "t1", key: Buffer.alloc(32, 8) }]);
const SITE = "https://ascribe.example.com/";
const STRIPE_SECRET = "whsec_test0123456789abcdef";

test("add answers id, kind, webhook URL and secret; stored sealed; list never shows it", async () => {
  const a = await seedAccount(db);
  const added = await addConnector(db, secrets, SITE, {
    account: a.accountId,
    kind: "stripe",
    secret: STRIPE_SECRET,
  });
  assert.match(added.id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(added, {
    id: added.id,
    kind: "stripe",
    webhook_url: `https://ascribe.example.com/api/hooks/stripe/${added.id}`,
    secret: STRIPE_SECRET,
  });
  const stored = await db.admin(a.accountId, (tx) =>
    rows<{ sealed: string }>(
      tx,
      sql`select secret_sealed as sealed from connectors where account_id = ${a.accountId}`,
    ),
  );
  assert.ok(stored[0]?.sealed.startsWith("v1.t1."));
  assert.ok(!stored[0]?.sealed.includes(STRIPE_SECRET), "never stored in clear");

  const listed = await listConnectors(db, SITE, { account: a.accountId });
  assert.equal(listed.length, 1);
  assert.ok(!JSON.stringify(listed).includes(STRIPE_SECRET));
  assert.ok(!JSON.stringify(listed).includes("secret"), "no secret field at all");
  assert.equal(listed[0]?.webhook_url, added.webhook_url);
  assert.equal(listed[0]?.last_event_at, null);
  assert.equal(listed[0]?.last_error, null);

  // Another account sees none of it.
  const b = await seedAccount(db);
  assert.deepEqual(await listConnectors(db, SITE, { account: b.accountId }), []);
  await assert.rejects(removeConnector(db, { account: b.accountId, id: added.id }), /not a connector/);
  await assert.rejects(testConnector(db, secrets, { account: b.accountId, id: added.id }), /not a connector/);
});

test("stripe needs the endpoint's whsec_ secret; an unknown account is refused", async () => {
  const a = await seedAccount(db);
  await assert.rejects(addConnector(db, secrets, SITE, { account: a.accountId, kind: "stripe" }), /--secret/);
  await assert.rejects(
    addConnector(db, secrets, SITE, { account: a.accountId, kind: "stripe", secret: "sk_live_nope" }),
    /whsec_/,
  );
  await assert.rejects(
    addConnector(db, secrets, SITE, {
      account: "00000000-0000-4000-8000-000000000000",
      kind: "stripe",
      secret: STRIPE_SECRET,
    }),
    /not found/,
  );
  assert.deepEqual(await listConnectors(db, SITE, { account: a.accountId }), []);
});

test("calendly and calcom: a secret is generated to paste into the tool, or the one given is kept", async () => {
  const a = await seedAccount(db);
  const calendly = await addConnector(db, secrets, SITE, { account: a.accountId, kind: "calendly" });
  assert.match(calendly.secret ?? "", /^whsec_[A-Za-z0-9_-]{32}$/);
  assert.equal(calendly.webhook_url, `https://ascribe.example.com/api/hooks/calendly/${calendly.id}`);
  const calcom = await addConnector(db, secrets, SITE, {
    account: a.accountId,
    kind: "calcom",
    secret: "my-cal-secret",
  });
  assert.equal(calcom.secret, "my-cal-secret");
  assert.equal(calcom.webhook_url, `https://ascribe.example.com/api/hooks/calcom/${calcom.id}`);
  const status = await testConnector(db, secrets, { account: a.accountId, id: calcom.id });
  assert.equal(status.secret, "ok");
});

test("test reports the secret opening, the last event and the last error; remove deletes", async () => {
  const a = await seedAccount(db);
  const { id } = await addConnector(db, secrets, SITE, {
    account: a.accountId,
    kind: "stripe",
    secret: STRIPE_SECRET,
  });
  assert.deepEqual(await testConnector(db, secrets, { account: a.accountId, id }), {
    id,
    kind: "stripe",
    ok: true,
    secret: "ok",
    last_event_at: null,
    last_sync_at: null,
    last_error: null,
    last_error_at: null,
  });
  // Another instance's keys cannot open it: every delivery would be refused.
  const foreign = await testConnector(db, otherKeys, { account: a.accountId, id });
  assert.equal(foreign.ok, false);
  assert.equal(foreign.secret, "unreadable");

  await db.admin(a.accountId, (tx) =>
    tx.execute(sql`
      update connectors set last_event_at = '2026-03-01T10:00:00Z', last_error = 'signature: mismatch',
             last_error_at = '2026-03-01T11:00:00Z'
      where account_id = ${a.accountId} and id = ${id}::uuid`),
  );
  const failing = await testConnector(db, secrets, { account: a.accountId, id });
  assert.equal(failing.ok, false);
  assert.equal(failing.last_event_at, "2026-03-01T10:00:00.000Z");
  assert.equal(failing.last_error, "signature: mismatch");
  assert.equal(failing.last_error_at, "2026-03-01T11:00:00.000Z");

  assert.deepEqual(await removeConnector(db, { account: a.accountId, id }), { id, removed: true });
  assert.deepEqual(await listConnectors(db, SITE, { account: a.accountId }), []);
  await assert.rejects(removeConnector(db, { account: a.accountId, id }), /not a connector/);
});
