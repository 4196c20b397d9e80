import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { createAdIndexCache } from "../../src/attribution/ad-index-cache.ts";
import { type Database, rows } from "../../src/db/client.ts";
import { beaconSchema } from "../../src/ingest/beacon.ts";
import { createBeaconWriter } from "../../src/ingest/beacon-writer.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

/*
 * Two batches of one account in flight at once (PostgreSQL's production setting): what one batch has
 * not committed yet, the other cannot see. Without keeping a visitor's and a contact's beacons out of
 * concurrent batches, a page view written beside its visitor's form stayed without the contact, and a
 * phone-only contact (no unique index) was created twice.
 */
describe("beacon writer: two batches in flight", () => {
  test("a visitor's and a contact's beacons in concurrent batches: every touch joins its one contact", async () => {
    const a = await seedAccount(db);
    const writer = createBeaconWriter(db, createAdIndexCache(), { concurrency: 2, maxBatch: 12 });
    // 24 visitors; visitor v is the person of identity v % 6: emails for 0–3, phones only for 4–5.
    const identity = (v: number) =>
      v % 6 < 4 ? { email: `person${v % 6}@example.com` } : { phone: `+3361234000${v % 6}` };
    const writes: Promise<void>[] = [];
    let sequence = 0;
    for (let round = 0; round < 6; round++) {
      for (let v = 0; v < 24; v++) {
        sequence += 1;
        // Each visitor: a page view, a form (round 2), page views after it.
        const beacon = beaconSchema.parse({
          type: round === 2 ? "form_submit" : "page_view",
          id: `concurrent-${String(sequence).padStart(4, "0")}-0123456789`,
          visitor_id: `visitor-${v}`,
          url: "https://example.com/",
          ...(round === 2 ? { contact: identity(v), form: { title: `Form ${round}` } } : {}),
        });
        writes.push(writer.write(a.accountId, beacon, new Date(Date.UTC(2026, 0, 1, 0, 0, sequence))));
        // A batch starts at the end of each event loop turn: small batches, many of them overlapping.
        if (sequence % 5 === 0) await tick();
      }
    }
    await Promise.all(writes);

    const contacts = await db.admin(a.accountId, (tx) =>
      rows<{ id: string; email: string | null; phone: string | null }>(
        tx,
        sql`select id, email, phone from contacts where account_id = ${a.accountId} order by email, phone`,
      ),
    );
    assert.deepEqual(
      contacts.map((c) => c.email ?? c.phone),
      [
        "person0@example.com",
        "person1@example.com",
        "person2@example.com",
        "person3@example.com",
        "+33612340004",
        "+33612340005",
      ],
    );
    const touches = await db.admin(a.accountId, (tx) =>
      rows<{ visitor_id: string; email: string | null; phone: string | null; n: number }>(
        tx,
        sql`select t.visitor_id, c.email, c.phone, count(*)::int as n
            from touchpoints t left join contacts c on c.account_id = t.account_id and c.id = t.contact_id
            where t.account_id = ${a.accountId}
            group by 1, 2, 3 order by 1`,
      ),
    );
    // One row per visitor: all six of its touches with its person's contact, none left anonymous.
    assert.equal(touches.length, 24);
    for (const t of touches) {
      const v = Number(t.visitor_id.slice("visitor-".length));
      const expected = identity(v);
      assert.deepEqual(
        { visitor: t.visitor_id, contact: t.email ?? t.phone, n: t.n },
        { visitor: t.visitor_id, contact: expected.email ?? expected.phone, n: 6 },
      );
    }
  });
});
