import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { awayFromWindowEdge, createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
const counters = createMemoryCounterStore();
let app: Awaited<ReturnType<typeof createTestApp>>;
before(async () => {
  db = await openTestDatabase();
  app = await createTestApp(db, { counters });
});
after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

let ip = 0;
function send(body: unknown, options: { contentType?: string; host?: string; remoteAddress?: string } = {}) {
  ip += 1;
  return app.inject({
    method: "POST",
    url: "/api/collect",
    headers: {
      "content-type": options.contentType ?? "text/plain;charset=UTF-8",
      ...(options.host ? { host: options.host } : {}),
    },
    payload: typeof body === "string" ? body : JSON.stringify(body),
    remoteAddress: options.remoteAddress ?? `10.30.${Math.floor(ip / 250)}.${ip % 250}`,
  });
}

const touches = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{
      kind: string;
      event_type: string;
      visitor_id: string;
      contact_id: string | null;
      is_paid: boolean;
      resolution: string;
      utm: Record<string, string>;
    }>(
      tx,
      sql`select kind, event_type, visitor_id, contact_id, is_paid, resolution, utm from touchpoints
          where account_id = ${accountId} order by occurred_at, created_at, id`,
    ),
  );

describe("POST /api/collect", () => {
  test("a page view is stored after commit (text/plain), once per beacon id, resolved against the ads", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, (tx) =>
      tx.execute(
        sql`insert into ads (account_id, platform, ad_id, ad_name) values (${a.accountId}, 'meta', '120210000000000001', 'Video A')`,
      ),
    );
    const beacon = {
      type: "page_view",
      client_key: a.clientKey,
      id: "beacon-0001-0123456789abc",
      visitor_id: "visitor-0001",
      url: "https://example.com/landing?utm_source=facebook",
      utm: { source: "facebook", medium: "paid", content: "Video A" },
      ad_ids: { ad_id: "120210000000000001" },
      click_ids: { fbclid: "IwAR0AbC" },
    };
    const res = await send(beacon);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.headers["access-control-allow-origin"], "*");
    assert.equal((await send(beacon)).statusCode, 204);
    assert.deepEqual(await touches(a.accountId), [
      {
        kind: "web",
        event_type: "page_view",
        visitor_id: "visitor-0001",
        contact_id: null,
        is_paid: true,
        resolution: "exact",
        utm: { source: "facebook", medium: "paid", content: "Video A" },
      },
    ]);
  });

  test("a form submission makes the visitor a contact: earlier and later visits join its journey", async () => {
    const a = await seedAccount(db);
    const base = { client_key: a.clientKey, visitor_id: "visitor-0002", url: "https://example.com/" };
    await send({ ...base, type: "page_view", utm: { source: "google", medium: "cpc" } });
    await send({
      ...base,
      type: "form_submit",
      contact: { email: " Eve@Example.com ", first_name: "Eve" },
      form: { title: "Apply" },
    });
    await send({ ...base, type: "page_view" });
    const journey = await touches(a.accountId);
    const [contact] = await db.admin(a.accountId, (tx) =>
      rows<{ id: string; email: string; name: string; form_titles: string[] }>(
        tx,
        sql`select id, email, name, form_titles from contacts where account_id = ${a.accountId}`,
      ),
    );
    assert.deepEqual(
      { ...contact, id: undefined },
      { id: undefined, email: "eve@example.com", name: "Eve", form_titles: ["Apply"] },
    );
    assert.deepEqual(
      journey.map((t) => [t.kind, t.event_type, t.contact_id === contact?.id]),
      [
        ["web", "page_view", true],
        ["conversion", "form_submit", true],
        ["web", "page_view", true],
      ],
    );
  });

  test("a registered first-party host names the account without a client key", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, (tx) =>
      tx.execute(
        sql`insert into tracking_hosts (account_id, host) values (${a.accountId}, 'track.shop.example')`,
      ),
    );
    const res = await send(
      { type: "page_view", visitor_id: "visitor-0003", url: "https://shop.example/" },
      { host: "TRACK.shop.example:443" },
    );
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await touches(a.accountId)).length, 1);
    const stranger = await send(
      { type: "page_view", visitor_id: "visitor-0003", url: "https://x.example/" },
      { host: "other.example" },
    );
    assert.equal(stranger.statusCode, 400);
  });

  test("malformed, unknown, oversize or unidentified beacons → 400 naming the problem, nothing written", async () => {
    const a = await seedAccount(db);
    const ok = {
      type: "page_view",
      client_key: a.clientKey,
      visitor_id: "visitor-0004",
      url: "https://example.com/",
    };
    const cases: [unknown, string][] = [
      ["{oops", "body is not valid JSON"],
      [{ ...ok, type: "click" }, 'type: Invalid option: expected one of "page_view"|"form_submit"|"booking"'],
      [{ ...ok, extra: 1 }, 'Unrecognized key: "extra"'],
      [{ ...ok, url: "javascript:alert(1)" }, "url: Invalid URL"],
      [{ ...ok, visitor_id: "x" }, "visitor_id: must be 8–64 characters of [A-Za-z0-9_-]"],
      [
        { ...ok, client_key: "ck_AAAAAAAAAAAAAAAA" },
        "client_key: unknown client key (or unregistered tracking host)",
      ],
      [{ ...ok, utm: { source: "x".repeat(20_000) } }, "request body exceeds 16384 bytes"],
    ];
    for (const [body, error] of cases) {
      const res = await send(body);
      assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80));
      assert.deepEqual(res.json(), { error });
    }
    assert.equal((await touches(a.accountId)).length, 0);
  });

  test("a flood from one address is cut at 600 a minute with 429", async () => {
    const a = await seedAccount(db);
    // The minute windows are epoch-aligned: the 600 and the 601st must fall in the same one.
    await awayFromWindowEdge(60_000);
    for (let i = 0; i < 600; i++) await counters.hit("collect-ip:10.40.0.1", 60_000);
    const res = await send(
      { type: "page_view", client_key: a.clientKey, visitor_id: "visitor-0005", url: "https://example.com/" },
      { remoteAddress: "10.40.0.1" },
    );
    assert.equal(res.statusCode, 429);
    assert.deepEqual(res.json(), { error: "rate_limited", retry_after_seconds: 60 });
  });
});
