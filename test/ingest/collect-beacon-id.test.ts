import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { createAdIndexCache } from "../../src/attribution/ad-index-cache.ts";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { type Beacon, beaconSchema } from "../../src/ingest/beacon.ts";
import { createBeaconWriter } from "../../src/ingest/beacon-writer.ts";
import { openBeaconBatch } from "../../src/queries/open-beacon-batch.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  type SeededAccount,
  seedAccount,
} from "../helpers/harness.ts";

/*
 * A beacon's `id` (issue 19, item 10): the client sends the same id on every resend of a beacon, and
 * the account stores it once. Counted through the API, as a client of the account would see it.
 */

let db: Database;
let app: Awaited<ReturnType<typeof createTestApp>>;
/** Tenant transactions run through `counted` (the writers' of the batch tests). */
let tenantTransactions = 0;
let counted: Database;
before(async () => {
  db = await openTestDatabase();
  app = await createTestApp(db, { counters: createMemoryCounterStore() });
  counted = Object.assign(Object.create(db) as Database, {
    tenant: <T>(accountId: string, fn: (tx: Sql) => Promise<T>) => {
      tenantTransactions += 1;
      return db.tenant(accountId, fn);
    },
  });
});
after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

// 128 bits as track.js writes them (32 hex digits), a base64url one and a UUID.
const HEX_ID = "9f86d081884c7d659a2feaa0c55ad015";
const B64_ID = "n4bQgYhMfWWaL-qgxVrQFQ";
const UUID_ID = "3b241101-e2bb-4255-8caf-4136c566a962";

let ip = 0;
function send(body: unknown) {
  ip += 1;
  return app.inject({
    method: "POST",
    url: "/api/collect",
    headers: { "content-type": "text/plain;charset=UTF-8" },
    payload: JSON.stringify(body),
    remoteAddress: `10.70.${Math.floor(ip / 250)}.${ip % 250}`,
  });
}

interface ApiTouch {
  event_type: string;
  contact_email: string | null;
  visitor_id: string;
}
interface ApiContact {
  email: string;
  name: string | null;
  form_titles: string[];
}

/** What the account's API shows: its touchpoints (by type: a batch's share one time) and its contacts. */
async function seen(account: SeededAccount) {
  const key = await account.key(["read:journeys", "read:contacts"]);
  const get = async <T>(path: string): Promise<T> => {
    const res = await app.inject({ method: "GET", url: `/api/v1${path}`, headers: bearer(key) });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: T }).data;
  };
  const feed = await get<{ touchpoints: ApiTouch[] }>("/touchpoints?limit=500");
  const contacts = await get<ApiContact[]>("/contacts");
  return {
    touches: feed.touchpoints
      .map((t): [string, string, string | null] => [t.event_type, t.visitor_id, t.contact_email])
      .sort((x, y) => x[0].localeCompare(y[0])),
    contacts: contacts.map((c) => [c.email, c.name, c.form_titles]),
  };
}

const receipts = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ beacon_id: string }>(
      tx,
      sql`select beacon_id from beacon_receipts where account_id = ${accountId} order by beacon_id`,
    ),
  );

const pageView = (account: SeededAccount, id: string | undefined, visitor = "visitor-id0001") => ({
  type: "page_view",
  client_key: account.clientKey,
  ...(id === undefined ? {} : { id }),
  visitor_id: visitor,
  url: "https://shop.example/offer?utm_source=facebook&utm_medium=paid",
  params: { utm_source: "facebook", utm_medium: "paid", utm_ad_id: "120210000000000001" },
});

const lead = (account: SeededAccount, id: string, visitor = "visitor-id0001") => ({
  type: "form_submit",
  client_key: account.clientKey,
  id,
  visitor_id: visitor,
  url: "https://shop.example/contact",
  contact: { email: "Ann@Example.com", name: "Ann" },
  form: { title: "Apply" },
});

describe("POST /api/collect: a beacon's id", () => {
  test("the same page view and lead sent twice, one after the other: each stored once, both answered 204", async () => {
    const a = await seedAccount(db);
    const codes = [];
    for (const body of [pageView(a, HEX_ID), lead(a, B64_ID), pageView(a, HEX_ID), lead(a, B64_ID)])
      codes.push((await send(body)).statusCode);
    assert.deepEqual(codes, [204, 204, 204, 204]);
    assert.deepEqual(await seen(a), {
      touches: [
        ["form_submit", "visitor-id0001", "ann@example.com"],
        ["page_view", "visitor-id0001", "ann@example.com"],
      ],
      contacts: [["ann@example.com", "Ann", ["Apply"]]],
    });
    assert.deepEqual(await receipts(a.accountId), [{ beacon_id: HEX_ID }, { beacon_id: B64_ID }]);
  });

  test("a resend changes nothing, even after the contact changed since the first copy", async () => {
    const a = await seedAccount(db);
    assert.equal((await send(lead(a, UUID_ID))).statusCode, 204);
    // The first copy made the contact; it is then edited (a CRM import, an administrator).
    await db.admin(a.accountId, (tx) =>
      tx.execute(sql`update contacts set name = null, form_titles = '{}', updated_at = '2026-01-01T00:00:00Z'
                     where account_id = ${a.accountId}`),
    );
    assert.equal((await send(lead(a, UUID_ID))).statusCode, 204);
    const [contact] = await db.admin(a.accountId, (tx) =>
      rows<{ name: string | null; form_titles: string[]; untouched: boolean }>(
        tx,
        sql`select name, form_titles, updated_at = '2026-01-01T00:00:00Z' as untouched
            from contacts where account_id = ${a.accountId}`,
      ),
    );
    // Without the receipt the resend would fill the name and the title again and touch updated_at.
    assert.deepEqual(contact, { name: null, form_titles: [], untouched: true });
    assert.equal((await seen(a)).touches.length, 1);
  });

  test("different ids are different beacons; the same id in another account is that account's own", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    for (const body of [pageView(a, HEX_ID), pageView(a, B64_ID), pageView(b, HEX_ID)])
      assert.equal((await send(body)).statusCode, 204);
    assert.deepEqual((await seen(a)).touches, [
      ["page_view", "visitor-id0001", null],
      ["page_view", "visitor-id0001", null],
    ]);
    assert.deepEqual((await seen(b)).touches, [["page_view", "visitor-id0001", null]]);
  });

  test("copies sent at once (a page's beacon and its fallback, a network resend): one of each", async () => {
    const a = await seedAccount(db);
    const copies = [pageView(a, HEX_ID), lead(a, B64_ID), pageView(a, HEX_ID), lead(a, B64_ID)];
    const answers = await Promise.all([...copies, ...copies].map(send));
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [204, 204, 204, 204, 204, 204, 204, 204],
    );
    assert.deepEqual(await seen(a), {
      touches: [
        ["form_submit", "visitor-id0001", "ann@example.com"],
        ["page_view", "visitor-id0001", "ann@example.com"],
      ],
      contacts: [["ann@example.com", "Ann", ["Apply"]]],
    });
  });

  test("a beacon without an id (an old cached track.js) is stored each time it is sent", async () => {
    const a = await seedAccount(db);
    for (let i = 0; i < 2; i++) assert.equal((await send(pageView(a, undefined))).statusCode, 204);
    assert.equal((await seen(a)).touches.length, 2);
    assert.deepEqual(await receipts(a.accountId), []);
  });

  test("a malformed id → 400 naming it, and nothing is stored", async () => {
    const a = await seedAccount(db);
    const message = "id: must be 22–64 characters of [A-Za-z0-9_-] (128 random bits or more)";
    const cases: [unknown, string][] = [
      ["group-01", message],
      ["n4bQgYhMfWWaL-qgxVrQF", message],
      ["n4bQgYhMfWWaL+qgxVrQFQ==", message],
      ["9f86d081884c7d65 9a2feaa0c55ad015", message],
      ["x".repeat(65), message],
      ["", message],
      [1234567, "id: Invalid input: expected string, received number"],
      [null, "id: Invalid input: expected string, received null"],
    ];
    for (const [id, error] of cases) {
      const res = await send({ ...lead(a, HEX_ID), id });
      assert.equal(res.statusCode, 400, String(id));
      assert.deepEqual(res.json(), { error }, String(id));
    }
    assert.deepEqual(await seen(a), { touches: [], contacts: [] });
    assert.deepEqual(await receipts(a.accountId), []);
  });
});

/** A beacon as the route hands it to the writer. */
const parsed = (body: unknown): Beacon => beaconSchema.parse(body);

describe("the beacon writer: ids in batches and across writers", () => {
  test("two copies in one batch land once; a third beacon of the batch lands too; one transaction", async () => {
    const a = await seedAccount(db);
    const writer = createBeaconWriter(counted, createAdIndexCache());
    const at = new Date();
    const before = tenantTransactions;
    // Written in the same turn: one batch.
    await Promise.all([
      writer.write(a.accountId, parsed(lead(a, B64_ID)), at),
      writer.write(a.accountId, parsed(lead(a, B64_ID)), at),
      writer.write(a.accountId, parsed(pageView(a, HEX_ID)), at),
      writer.write(a.accountId, parsed(pageView(a, HEX_ID)), at),
    ]);
    assert.equal(tenantTransactions - before, 1);
    assert.deepEqual(await seen(a), {
      touches: [
        ["form_submit", "visitor-id0001", "ann@example.com"],
        ["page_view", "visitor-id0001", "ann@example.com"],
      ],
      contacts: [["ann@example.com", "Ann", ["Apply"]]],
    });
  });

  test("two writers (two instances) writing the same beacons at once: one of each", async () => {
    const a = await seedAccount(db);
    const first = createBeaconWriter(db, createAdIndexCache());
    const second = createBeaconWriter(db, createAdIndexCache());
    const at = new Date();
    // On PostgreSQL the two transactions overlap: the later claim waits on the key, then skips.
    // Opposite orders: the claims are sorted, so they never wait on each other in a cycle.
    const beacons = [lead(a, B64_ID), pageView(a, HEX_ID), pageView(a, UUID_ID)].map(parsed);
    await Promise.all([
      ...beacons.map((b) => first.write(a.accountId, b, at)),
      ...beacons.reverse().map((b) => second.write(a.accountId, b, at)),
    ]);
    const shown = await seen(a);
    assert.equal(shown.touches.length, 3);
    assert.deepEqual(shown.contacts, [["ann@example.com", "Ann", ["Apply"]]]);
    assert.deepEqual(
      (await receipts(a.accountId)).map((r) => r.beacon_id),
      [UUID_ID, HEX_ID, B64_ID].sort(),
    );
  });

  test("a claim racing an uncommitted one waits: it skips the id after a commit, takes it after a rollback", async () => {
    const a = await seedAccount(db);
    for (const [outcome, id] of [
      ["rollback", B64_ID],
      ["commit", HEX_ID],
    ] as const) {
      const claim = async (tx: Sql) =>
        (
          await openBeaconBatch(tx, a.accountId, {
            receipts: [{ beaconId: id, receivedAt: new Date() }],
            visitorIds: [],
          })
        ).claimed;
      let claimed = () => {};
      let release = () => {};
      const hasClaimed = new Promise<void>((resolve) => {
        claimed = resolve;
      });
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = db.tenant(a.accountId, async (tx) => {
        const ids = await claim(tx);
        claimed();
        await gate;
        if (outcome === "rollback") throw new Error("rolled back");
        return ids;
      });
      await hasClaimed;
      let settled = false;
      const second = db.tenant(a.accountId, claim).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled, false, `${outcome}: the second claim waits for the first transaction`);
      release();
      if (outcome === "rollback") await assert.rejects(first, /rolled back/);
      else assert.deepEqual([...(await first)], [id]);
      assert.deepEqual([...(await second)], outcome === "rollback" ? [id] : [], outcome);
    }
    assert.deepEqual(await receipts(a.accountId), [{ beacon_id: HEX_ID }, { beacon_id: B64_ID }]);
  });

  test("a batch that fails claims nothing: its beacons written again alone keep their ids, and a resend of the refused one lands", async () => {
    const a = await seedAccount(db);
    const writer = createBeaconWriter(db, createAdIndexCache());
    const at = new Date();
    // PostgreSQL stores no NUL character: this beacon passes validation but not the write.
    const refused = parsed({ ...pageView(a, UUID_ID), referrer: "https://example.com/\u0000" });
    const outcomes = await Promise.allSettled([
      writer.write(a.accountId, parsed(pageView(a, HEX_ID)), at),
      writer.write(a.accountId, refused, at),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ["fulfilled", "rejected"],
    );
    assert.deepEqual(await receipts(a.accountId), [{ beacon_id: HEX_ID }]);
    // The client was not answered 2xx for it, so it sends it again (here without the NUL).
    await writer.write(a.accountId, parsed(pageView(a, UUID_ID)), at);
    assert.equal((await seen(a)).touches.length, 2);
  });
});
