import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { addConnector, listConnectors } from "../../src/admin/connectors.ts";
import { createSecretBox } from "../../src/crypto/secret-box.ts";
import type { Database } from "../../src/db/client.ts";
import { recordConnectorOutcomes } from "../../src/queries/record-connector-outcomes.ts";
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
      recordConnectorOutcomes(tx, a.accountId, {
        outcomes: [{ connectorId: id, at: new Date(at), error: null }],
      }),
    );
  await record("2026-03-05T10:00:02.000Z");
  await record("2026-03-05T10:00:01.000Z");
  const [listed] = await listConnectors(db, "https://ascribe.example.com", { account: a.accountId });
  assert.equal(listed?.last_event_at, "2026-03-05T10:00:02.000Z");
  await record("2026-03-05T10:00:03.000Z");
  const [later] = await listConnectors(db, "https://ascribe.example.com", { account: a.accountId });
  assert.equal(later?.last_event_at, "2026-03-05T10:00:03.000Z");
});

test("a batch of outcomes: each connector's latest delivery time and the batch's last error, other connectors untouched", async () => {
  const a = await seedAccount(db);
  const add = async () =>
    (
      await addConnector(db, secrets, "https://ascribe.example.com", {
        account: a.accountId,
        kind: "calendly",
      })
    ).id;
  const [first, second, idle] = [await add(), await add(), await add()];
  const at = (s: string) => new Date(`2026-03-05T10:00:0${s}.000Z`);
  await db.tenant(a.accountId, (tx) =>
    recordConnectorOutcomes(tx, a.accountId, {
      outcomes: [
        { connectorId: first, at: at("4"), error: null },
        { connectorId: first, at: at("5"), error: "signature stale" },
        { connectorId: second, at: at("1"), error: null },
        { connectorId: first, at: at("2"), error: null },
        { connectorId: first, at: at("3"), error: "signature mismatch" },
      ],
    }),
  );
  const listed = await listConnectors(db, "https://ascribe.example.com", { account: a.accountId });
  const state = (id: string) => {
    const c = listed.find((l) => l.id === id);
    return [c?.last_event_at, c?.last_error, c?.last_error_at];
  };
  assert.deepEqual(state(first), [
    "2026-03-05T10:00:04.000Z",
    "signature mismatch",
    "2026-03-05T10:00:03.000Z",
  ]);
  assert.deepEqual(state(second), ["2026-03-05T10:00:01.000Z", null, null]);
  assert.deepEqual(state(idle), [null, null, null]);
});
