import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { createAdIndexCache } from "../../src/attribution/ad-index-cache.ts";
import { type Database, openPostgres, rows, type Sql } from "../../src/db/client.ts";
import { beaconSchema } from "../../src/ingest/beacon.ts";
import { type Received, writeBeaconBatch } from "../../src/ingest/beacon-batch.ts";
import { type CrmEvent, crmEventSchema } from "../../src/ingest/crm-event.ts";
import { ingestCrmEvents } from "../../src/ingest/ingest-events.ts";
import { icpCriteria } from "../../src/queries/icp-criteria.ts";
import { insertAuditEntries } from "../../src/queries/insert-audit-entries.ts";
import { replaceIcpCriteria } from "../../src/queries/replace-icp-criteria.ts";
import { backend, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * The ingest paths' statements, the point reads and the audit batches are prepared on their
 * connection (StatementOptions.prepare): parsed once per connection, not once per call. Their texts
 * must not vary with the batch — a text per batch size would prepare a new statement for every
 * batch, for the connection's whole life.
 */

let db: Awaited<ReturnType<typeof openTestDatabase>>;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

let sequence = 0;
function received(visitor: string, extra: Record<string, unknown> = {}): Received {
  sequence += 1;
  const beacon = beaconSchema.parse({
    type: "page_view",
    id: `prepared-${String(sequence).padStart(4, "0")}-0123456789`,
    visitor_id: `visitor-${visitor}`,
    url: "https://example.com/",
    params: { utm_content: "Video 3", utm_ad_id: "120210000000003" },
    ...extra,
  });
  return { beacon, receivedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, sequence)) };
}

const form = (visitor: string, email: string, title: string) =>
  received(visitor, { type: "form_submit", contact: { email, name: "Ann" }, form: { title } });

/** The statements prepared on the transaction's connection, by their text. */
const prepared = (tx: Sql) =>
  rows<{ statement: string }>(
    tx,
    sql`select statement from pg_prepared_statements where name like 'ascribe\\_%' order by statement`,
  );

/**
 * Anonymous page views, then a batch of one form (a contact matched and created, a visitor adopted,
 * a title added), then one of several forms and views: every statement of the writer runs in the
 * first two batches and again, with more items, in the third.
 */
async function writeThreeBatches(database: Database, accountId: string) {
  const adIndexes = createAdIndexCache();
  return database.tenant(accountId, async (tx) => {
    await writeBeaconBatch(tx, accountId, [received("v1"), received("v2"), received("v3")], adIndexes);
    await writeBeaconBatch(tx, accountId, [form("v1", "one@example.com", "Quote")], adIndexes);
    const afterOne = await prepared(tx);
    await writeBeaconBatch(
      tx,
      accountId,
      [
        form("v2", "two@example.com", "Quote"),
        received("v2"),
        form("v3", "three@example.com", "Demo"),
        form("v4", "one@example.com", "Demo"),
        received("v5"),
      ],
      adIndexes,
    );
    return { afterOne, afterMany: await prepared(tx) };
  });
}

describe("statements prepared on their connection", {
  skip: backend !== "postgres" && "a PostgreSQL feature",
}, () => {
  test("each statement is prepared once on its connection, whatever the batch's size", async () => {
    const { accountId } = await seedAccount(db);
    const { afterOne, afterMany } = await writeThreeBatches(db, accountId);
    const opening = (r: { statement: string }) => r.statement.trim().split(/\s+/).slice(0, 3).join(" ");
    const writer = [
      "with claimed as", // ids claimed, the ad catalog's version, the visitors' contacts
      "with incoming as", // contacts matched, created or given form titles
      "update touchpoints t", // visitors adopted
      "insert into touchpoints", // the touchpoints
    ];
    assert.deepEqual(
      writer.filter((w) => !afterOne.some((r) => opening(r) === w)),
      [],
      afterOne.map((r) => r.statement).join("\n---\n"),
    );
    assert.deepEqual(afterMany, afterOne);
    const touches = await db.admin(accountId, (tx) =>
      rows<{ n: number; with_contact: number }>(
        tx,
        sql`select count(*)::int as n, count(contact_id)::int as with_contact from touchpoints where account_id = ${accountId}`,
      ),
    );
    assert.deepEqual(touches, [{ n: 9, with_contact: 8 }]);
  });

  test("behind a transaction-mode pooler nothing is prepared (the next transaction may get another connection)", async () => {
    const { accountId } = await seedAccount(db);
    const pooled = await openPostgres(db.url ?? "", 5_000, { poolMode: "transaction" });
    try {
      const { afterOne, afterMany } = await writeThreeBatches(pooled, accountId);
      assert.deepEqual(afterOne, []);
      assert.deepEqual(afterMany, []);
    } finally {
      await pooled.close();
    }
  });

  test("a CRM event's ingest prepares no new statement for a larger batch (webhooks, Stripe, imports)", async () => {
    const { accountId } = await seedAccount(db);
    const event = (id: string, over: Partial<CrmEvent> = {}): CrmEvent =>
      crmEventSchema.parse({
        id,
        event_type: "lead",
        event_datetime: "2026-02-01T10:00:00Z",
        contact_email: `${id}@example.com`,
        utm_source: "facebook",
        utm_ad_id: "120210000000003",
        ...over,
      });
    const sale = (id: string, email: string, day: string) =>
      event(id, {
        event_type: "sale",
        contact_email: email,
        product_key: "p",
        amount: 300,
        event_datetime: day,
      });
    const { afterOne, afterMany } = await db.tenant(accountId, async (tx) => {
      await ingestCrmEvents(
        tx,
        accountId,
        [event("a1"), sale("a2", "a1@example.com", "2026-02-02T10:00:00Z")],
        {
          origin: "webhook",
        },
      );
      const afterOne = await prepared(tx);
      await ingestCrmEvents(
        tx,
        accountId,
        [
          event("b1"),
          event("b2", { event_type: "booking" }),
          sale("b3", "b1@example.com", "2026-02-03T10:00:00Z"),
          sale("b4", "b2@example.com", "2026-02-04T10:00:00Z"),
          event("a1", { contact_name: "Ann" }),
        ],
        { origin: "webhook" },
      );
      return { afterOne, afterMany: await prepared(tx) };
    });
    assert.ok(afterOne.length >= 8, `${afterOne.length} statements prepared`);
    assert.deepEqual(afterMany, afterOne);
  });

  test("a point read is prepared, and row-level security still filters its generic plan", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    await db.tenant(a.accountId, (tx) =>
      replaceIcpCriteria(tx, a.accountId, { criteria: { industry: "a" } }),
    );
    await db.tenant(b.accountId, (tx) =>
      replaceIcpCriteria(tx, b.accountId, { criteria: { industry: "b" } }),
    );
    // Reads one after the other get the pool's same idle connection: past the fifth run,
    // PostgreSQL may keep the generic plan, which must still apply the policy.
    for (let run = 0; run < 8; run++) {
      assert.deepEqual(await db.read(a.accountId, (tx) => icpCriteria(tx, a.accountId)), { industry: "a" });
    }
    const statements = await db.read(a.accountId, prepared);
    assert.ok(
      statements.some((r) => r.statement.startsWith("select account_id, criteria from icp_criteria")),
      statements.map((r) => r.statement).join("\n---\n"),
    );
    // Account b's row asked for under account a's context: hidden by the policy, not by the text.
    assert.deepEqual(await db.read(a.accountId, (tx) => icpCriteria(tx, b.accountId)), {});
    assert.deepEqual(await db.read(b.accountId, (tx) => icpCriteria(tx, b.accountId)), { industry: "b" });
  });

  test("the audit writer's statement is prepared once, whatever the batch's size", async () => {
    const account = await seedAccount(db);
    await account.key();
    const [key] = await db.admin(account.accountId, (tx) =>
      rows<{ id: string }>(tx, sql`select id from api_keys where account_id = ${account.accountId}`),
    );
    const entry = (second: number) => ({
      key_id: key?.id ?? "",
      method: "GET",
      path: "/api/v1/icp/criteria",
      scope: "read:icp",
      status: 200,
      ip: "127.0.0.1",
      occurred_at: `2026-02-01T10:00:${String(second).padStart(2, "0")}Z`,
    });
    const { afterOne, afterMany } = await db.tenant(account.accountId, async (tx) => {
      await insertAuditEntries(tx, account.accountId, { entries: [entry(1)] });
      const afterOne = await prepared(tx);
      await insertAuditEntries(tx, account.accountId, { entries: [entry(2), entry(3), entry(4)] });
      return { afterOne, afterMany: await prepared(tx) };
    });
    assert.ok(
      afterOne.some((r) => r.statement.trim().startsWith("with e as")),
      afterOne.map((r) => r.statement).join("\n---\n"),
    );
    assert.deepEqual(afterMany, afterOne);
    const written = await db.admin(account.accountId, (tx) =>
      rows<{ n: number; last_used_at: string }>(
        tx,
        sql`select (select count(*)::int from audit_log where account_id = ${account.accountId}) as n,
                   (select to_char(last_used_at at time zone 'UTC', 'HH24:MI:SS') from api_keys where id = ${key?.id ?? ""}) as last_used_at`,
      ),
    );
    assert.deepEqual(written, [{ n: 4, last_used_at: "10:00:04" }]);
  });
});
