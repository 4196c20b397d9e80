import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { addConnector, listConnectors } from "../../src/admin/connectors.ts";
import { createSecretBox } from "../../src/crypto/secret-box.ts";
import type { Database } from "../../src/db/client.ts";
import { recordConnectorOutcome } from "../../src/queries/record-connector-outcome.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * A delivery's time is recorded after its commit, outside its transaction (inside it, the
 * connector's row stayed locked and concurrent deliveries queued behind one another), so deliveries
 * record their times out of order: the latest stays.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const secrets = createSecretBox([{ id: "t1", key: Buffer.alloc(32, 7) }]);

test("last_event_at keeps the latest delivery's time when an earlier one finishes last", async () => {
  const a = await seedAccount(db);
  const { id } = await addConnector(db, secrets, "https://ascribe.example.com", {
    account: a.accountId,
    kind: "stripe",
    secret: "whsec_test0123456789abcdef",
  });
  const record = (at: string) =>
    db.tenant(a.accountId, (tx) =>
      recordConnectorOutcome(tx, a.accountId, { connectorId: id, at: new Date(at), error: null }),
    );
  await record("2026-03-05T10:00:02.000Z");
  await record("2026-03-05T10:00:01.000Z");
  const [listed] = await listConnectors(db, "https://ascribe.example.com", { account: a.accountId });
  assert.equal(listed?.last_event_at, "2026-03-05T10:00:02.000Z");
  await record("2026-03-05T10:00:03.000Z");
  const [later] = await listConnectors(db, "https://ascribe.example.com", { account: a.accountId });
  assert.equal(later?.last_event_at, "2026-03-05T10:00:03.000Z");
});
