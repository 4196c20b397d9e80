import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { buildApp } from "../../src/app.ts";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { createAuditWriter } from "../../src/http/audit.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { createCollectAccounts } from "../../src/ingest/collect-accounts.ts";
import type { CollectServices } from "../../src/ingest/collect-services.ts";
import { keyStoreFor } from "../../src/main.ts";
import { routes } from "../../src/routes/index.ts";
import {
  createTestFiles,
  openTestDatabase,
  seedAccount,
  silentLogger,
  testSecrets,
} from "../helpers/harness.ts";

let db: Database;
/** Tenant transactions run through `counted` (the beacon writer's). */
let tenantTransactions = 0;
let counted: Database;
before(async () => {
  db = await openTestDatabase();
  counted = Object.assign(Object.create(db) as Database, {
    tenant: <T>(accountId: string, fn: (tx: Sql) => Promise<T>) => {
      tenantTransactions += 1;
      return db.tenant(accountId, fn);
    },
  });
});
after(async () => {
  await db.close();
});

async function appWith(collect: Partial<CollectServices> = {}, database: Database = counted) {
  // A clock that stands still: the counters' epoch-aligned minute never rolls over in the middle of
  // a test (a test filling a window of 60,000 then expecting a 429 failed when it did).
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
    collect,
  });
  await app.ready();
  return Object.assign(app, {
    counters,
    async shut() {
      await app.close();
      await audit.close();
    },
  });
}
type App = Awaited<ReturnType<typeof appWith>>;

let ip = 0;
function send(app: App, body: unknown, options: { host?: string; remoteAddress?: string } = {}) {
  ip += 1;
  return app.inject({
    method: "POST",
    url: "/api/collect",
    headers: { "content-type": "text/plain", ...(options.host ? { host: options.host } : {}) },
    payload: JSON.stringify(body),
    remoteAddress: options.remoteAddress ?? `10.60.${Math.floor(ip / 250)}.${ip % 250}`,
  });
}

const touches = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{
      external_id: string | null;
      event_type: string;
      visitor_id: string;
      contact_id: string | null;
      resolution: string;
      resolved_ad_id: string | null;
    }>(
      tx,
      sql`select external_id, event_type, visitor_id, contact_id, resolution, resolved_ad_id from touchpoints
          where account_id = ${accountId} order by external_id`,
    ),
  );

describe("POST /api/collect: ad index cache", () => {
  test("a beacon after an ad is added, renamed, excluded or deleted resolves against the new catalog", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    const ads = (statement: ReturnType<typeof sql>) => db.admin(a.accountId, (tx) => tx.execute(statement));
    await ads(sql`insert into ads (account_id, platform, ad_id, ad_name)
                  values (${a.accountId}, 'meta', '120210000000000001', 'Video A')`);
    const beacon = (id: string, content: string, adId?: string) =>
      send(app, {
        type: "page_view",
        client_key: a.clientKey,
        id,
        visitor_id: "visitor-cache1",
        url: "https://example.com/",
        utm: { source: "facebook", medium: "paid", content },
        ...(adId ? { ad_ids: { ad_id: adId } } : {}),
      });
    // The index is now cached with Video A only.
    assert.equal((await beacon("cache-01-0123456789abc", "Spring Promo")).statusCode, 204);
    assert.equal((await beacon("cache-02-0123456789abc", "Video B", "120210000000000002")).statusCode, 204);

    await ads(sql`insert into ads (account_id, platform, ad_id, ad_name)
                  values (${a.accountId}, 'meta', '120210000000000002', 'Spring Promo')`);
    assert.equal((await beacon("cache-03-0123456789abc", "Spring Promo")).statusCode, 204);
    assert.equal((await beacon("cache-04-0123456789abc", "x", "120210000000000002")).statusCode, 204);

    await ads(sql`update ads set ad_name = 'Summer Promo'
                  where account_id = ${a.accountId} and ad_id = '120210000000000002'`);
    assert.equal((await beacon("cache-05-0123456789abc", "Spring Promo")).statusCode, 204);
    assert.equal((await beacon("cache-06-0123456789abc", "summer  promo")).statusCode, 204);

    await ads(
      sql`update ads set is_excluded = true where account_id = ${a.accountId} and ad_id = '120210000000000001'`,
    );
    assert.equal((await beacon("cache-07-0123456789abc", "Video A")).statusCode, 204);

    await ads(sql`delete from ads where account_id = ${a.accountId} and ad_id = '120210000000000002'`);
    assert.equal((await beacon("cache-08-0123456789abc", "x", "120210000000000002")).statusCode, 204);

    assert.deepEqual(
      (await touches(a.accountId)).map((t) => [t.external_id, t.resolution, t.resolved_ad_id]),
      [
        ["beacon:cache-01-0123456789abc", "unresolved", null],
        ["beacon:cache-02-0123456789abc", "unresolved", null],
        ["beacon:cache-03-0123456789abc", "by_name", "120210000000000002"],
        ["beacon:cache-04-0123456789abc", "exact", "120210000000000002"],
        ["beacon:cache-05-0123456789abc", "unresolved", null],
        ["beacon:cache-06-0123456789abc", "by_name", "120210000000000002"],
        ["beacon:cache-07-0123456789abc", "unresolved", null],
        ["beacon:cache-08-0123456789abc", "unresolved", null],
      ],
    );
    await app.shut();
  });
});

describe("POST /api/collect: group commit", () => {
  test("concurrent beacons of one account share transactions; each is answered 204 and stored once", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    // The account is looked up (and cached) first, so that the 30 reach the writer together.
    const warm = {
      type: "page_view",
      client_key: a.clientKey,
      visitor_id: "visitor-warm",
      url: "https://example.com/",
    };
    assert.equal((await send(app, warm)).statusCode, 204);
    const before = tenantTransactions;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        send(app, {
          type: "page_view",
          client_key: a.clientKey,
          // Beacons 0 and 1 are the same beacon sent twice.
          id: `group-${String(Math.max(1, i)).padStart(2, "0")}-0123456789abc`,
          visitor_id: `visitor-g${i % 3}`,
          url: "https://example.com/",
        }),
      ),
    );
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      Array.from({ length: 30 }, () => 204),
    );
    const stored = (await touches(a.accountId)).filter((t) => t.external_id !== null);
    assert.equal(stored.length, 29);
    assert.equal(stored[0]?.external_id, "beacon:group-01-0123456789abc");
    assert.equal(stored[28]?.external_id, "beacon:group-29-0123456789abc");
    // Without group commit: 30 transactions; with it, the 30 that arrive together share one or two.
    assert.ok(tenantTransactions - before <= 2, `${tenantTransactions - before} transactions`);
    await app.shut();
  });

  test("within one batch, a visitor's touches before and after its form submission join the contact", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    const base = { client_key: a.clientKey, visitor_id: "visitor-batch1", url: "https://example.com/" };
    // An earlier, separate visit: adopted too.
    assert.equal(
      (await send(app, { ...base, type: "page_view", id: "join-000-0123456789abc" })).statusCode,
      204,
    );
    const answers = await Promise.all([
      send(app, { ...base, type: "page_view", id: "join-001-0123456789abc" }),
      send(app, {
        ...base,
        type: "form_submit",
        id: "join-002-0123456789abc",
        contact: { email: "Ann@Example.com", first_name: "Ann" },
        form: { title: "Apply" },
      }),
      send(app, { ...base, type: "page_view", id: "join-003-0123456789abc" }),
      send(app, {
        ...base,
        type: "booking",
        id: "join-004-0123456789abc",
        contact: { email: "ann@example.com" },
        form: { title: "Call" },
      }),
      send(app, { ...base, type: "page_view", id: "join-005-0123456789abc", visitor_id: "visitor-batch2" }),
    ]);
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [204, 204, 204, 204, 204],
    );
    const [contact, ...others] = await db.admin(a.accountId, (tx) =>
      rows<{ id: string; email: string; name: string; form_titles: string[] }>(
        tx,
        sql`select id, email, name, form_titles from contacts where account_id = ${a.accountId}`,
      ),
    );
    assert.deepEqual(others, []);
    assert.deepEqual(
      { email: contact?.email, name: contact?.name, form_titles: contact?.form_titles },
      { email: "ann@example.com", name: "Ann", form_titles: ["Apply", "Call"] },
    );
    assert.deepEqual(
      (await touches(a.accountId)).map((t) => [t.external_id, t.event_type, t.contact_id === contact?.id]),
      [
        ["beacon:join-000-0123456789abc", "page_view", true],
        ["beacon:join-001-0123456789abc", "page_view", true],
        ["beacon:join-002-0123456789abc", "form_submit", true],
        ["beacon:join-003-0123456789abc", "page_view", true],
        ["beacon:join-004-0123456789abc", "booking", true],
        ["beacon:join-005-0123456789abc", "page_view", false],
      ],
    );
    // A later visit of the contact's visitor, alone in its transaction, finds the contact too.
    assert.equal(
      (await send(app, { ...base, type: "page_view", id: "join-006-0123456789abc" })).statusCode,
      204,
    );
    const last = (await touches(a.accountId)).find((t) => t.external_id === "beacon:join-006-0123456789abc");
    assert.equal(last?.contact_id, contact?.id);
    await app.shut();
  });

  test("a known contact's later forms add the titles it lacks, in arrival order, and fill its name", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    const form = (n: number, title: string, contact: Record<string, string>) =>
      send(app, {
        type: "form_submit",
        client_key: a.clientKey,
        id: `title-00${n}-0123456789abc`,
        visitor_id: `visitor-title${n}`,
        url: "https://example.com/",
        contact,
        form: { title },
      });
    assert.equal((await form(0, "Apply", { email: "bo@example.com" })).statusCode, 204);
    assert.equal((await form(1, "Quote", { phone: "+1 415 555 0100" })).statusCode, 204);
    const answers = await Promise.all([
      form(2, "Call", { email: "bo@example.com" }),
      form(3, "Apply", { email: "BO@example.com", name: "Bo" }),
      form(4, "Webinar", { email: "bo@example.com" }),
      form(5, "Call", { email: "bo@example.com" }),
      form(6, "Quote", { phone: "+14155550100" }),
    ]);
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [204, 204, 204, 204, 204],
    );
    const contacts = await db.admin(a.accountId, (tx) =>
      rows<{ email: string | null; phone: string | null; name: string | null; form_titles: string[] }>(
        tx,
        sql`select email, phone, name, form_titles from contacts where account_id = ${a.accountId} order by created_at`,
      ),
    );
    assert.deepEqual(contacts, [
      { email: "bo@example.com", phone: null, name: "Bo", form_titles: ["Apply", "Call", "Webinar"] },
      { email: null, phone: "+14155550100", name: null, form_titles: ["Quote"] },
    ]);
    await app.shut();
  });

  test("a beacon the database refuses fails alone: the others of its batch are written and answered 204", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        send(app, {
          type: "page_view",
          client_key: a.clientKey,
          id: `fail-00${i}-0123456789abc`,
          visitor_id: "visitor-fail1",
          url: "https://example.com/",
          // PostgreSQL stores no NUL character: this beacon passes validation but not the write.
          ...(i === 3 ? { referrer: "https://example.com/\u0000" } : {}),
        }),
      ),
    );
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [204, 204, 204, 502, 204, 204, 204, 204],
    );
    assert.deepEqual(
      (await touches(a.accountId)).map((t) => t.external_id),
      [
        "beacon:fail-000-0123456789abc",
        "beacon:fail-001-0123456789abc",
        "beacon:fail-002-0123456789abc",
        "beacon:fail-004-0123456789abc",
        "beacon:fail-005-0123456789abc",
        "beacon:fail-006-0123456789abc",
        "beacon:fail-007-0123456789abc",
      ],
    );
    await app.shut();
  });
});

describe("POST /api/collect: limits and account lookup", () => {
  test("the production limits apply by default: 60,000 a minute per account", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    for (let i = 0; i < 60_000; i++) await app.counters.hit(`collect-account:${a.accountId}`, 60_000);
    const res = await send(app, {
      type: "page_view",
      client_key: a.clientKey,
      visitor_id: "visitor-limit1",
      url: "https://example.com/",
    });
    assert.equal(res.statusCode, 429);
    assert.deepEqual(res.json(), { error: "rate_limited", retry_after_seconds: 60 });
    assert.deepEqual(await touches(a.accountId), []);
    await app.shut();
  });

  test("limits given through the app's dependencies replace the defaults", async () => {
    const app = await appWith({ limits: { perIp: 2, perAccount: 1_000 } });
    const a = await seedAccount(db);
    const beacon = {
      type: "page_view",
      client_key: a.clientKey,
      visitor_id: "visitor-limit2",
      url: "https://example.com/",
    };
    const codes = [];
    for (let i = 0; i < 3; i++)
      codes.push((await send(app, beacon, { remoteAddress: "10.61.0.1" })).statusCode);
    assert.deepEqual(codes, [204, 204, 429]);
    await app.shut();
  });

  test("a removed tracking host is refused once the account cache's TTL has passed (another process's change)", async () => {
    let now = 1_000_000;
    // Another process removes the host: this process's administration generation does not move.
    const elsewhere = Object.assign(Object.create(db) as Database, { adminGeneration: () => 0 });
    const app = await appWith({
      accounts: createCollectAccounts(elsewhere, { ttlMs: 5_000, now: () => now }),
    });
    const a = await seedAccount(db);
    await db.admin(a.accountId, (tx) =>
      tx.execute(
        sql`insert into tracking_hosts (account_id, host) values (${a.accountId}, 'track.ttl.example')`,
      ),
    );
    const beacon = { type: "page_view", visitor_id: "visitor-ttl01", url: "https://ttl.example/" };
    assert.equal((await send(app, beacon, { host: "track.ttl.example" })).statusCode, 204);
    await db.admin(a.accountId, (tx) =>
      tx.execute(sql`delete from tracking_hosts where host = 'track.ttl.example'`),
    );
    now += 4_999;
    assert.equal((await send(app, beacon, { host: "track.ttl.example" })).statusCode, 204);
    now += 2;
    assert.equal((await send(app, beacon, { host: "track.ttl.example" })).statusCode, 400);
    await app.shut();
  });

  test("an administration transaction of this process empties the account cache at once", async () => {
    const app = await appWith();
    const a = await seedAccount(db);
    await db.admin(a.accountId, (tx) =>
      tx.execute(
        sql`insert into tracking_hosts (account_id, host) values (${a.accountId}, 'track.gen.example')`,
      ),
    );
    const beacon = { type: "page_view", visitor_id: "visitor-gen01", url: "https://gen.example/" };
    assert.equal((await send(app, beacon, { host: "track.gen.example" })).statusCode, 204);
    await db.admin(a.accountId, (tx) =>
      tx.execute(sql`delete from tracking_hosts where host = 'track.gen.example'`),
    );
    assert.equal((await send(app, beacon, { host: "track.gen.example" })).statusCode, 400);
    await app.shut();
  });
});
