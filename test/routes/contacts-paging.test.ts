import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

/*
 * /contacts/customers and /contacts/purchases: optional limit/offset, pages that partition the list,
 * and the whole list streamed (http/stream-rows.ts) — the same JSON as the pages put together.
 */

// 12:00 UTC on 31 March 2026: the purchases' default window is 2 to 31 March (UTC account).
const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });

type Row = Record<string, unknown>;

/**
 * `count` customers, each with one purchase, written with plain SQL in one transaction (the read
 * model's triggers do the rest). Customers' created_at take 7 values and purchases' dates 5, so most
 * rows tie with others on the first key of their order and only the id tells them apart.
 */
async function seedCustomers(accountId: string, count: number) {
  await env.db.admin(accountId, async (tx) => {
    await tx.execute(sql`
      insert into contacts (account_id, id, email, name)
      select ${accountId}, gen_random_uuid(), 'c' || lpad(g::text, 4, '0') || '@x.test', 'Client ' || g
      from generate_series(1, ${count}::int) g`);
    await tx.execute(sql`
      insert into purchases (account_id, id, contact_id, purchase_date, product_key, amount)
      select ${accountId}, 'p-' || c.email, c.id,
             timestamptz '2026-03-10T10:00:00Z' + (abs(hashtext(c.email)) % 5) * interval '1 day',
             'plan-' || (abs(hashtext(c.email)) % 3), 100 + abs(hashtext(c.email)) % 50
      from contacts c where c.account_id = ${accountId}`);
    await tx.execute(sql`
      insert into customers (account_id, id, contact_id, created_at)
      select ${accountId}, gen_random_uuid(), c.id,
             timestamptz '2026-03-01T00:00:00Z' + (abs(hashtext(c.email)) % 7) * interval '1 hour'
      from contacts c where c.account_id = ${accountId}`);
  });
}

async function raw(key: string, url: string) {
  const r = await env.app.inject({ method: "GET", url: `/api/v1${url}`, headers: bearer(key) });
  return { status: r.statusCode, type: String(r.headers["content-type"]), text: r.body };
}

/** Every page of `limit` rows, by offset, until a short one; each page's rows in order. */
async function walk(key: string, path: string, limit: number): Promise<Row[][]> {
  const pages: Row[][] = [];
  for (let offset = 0; ; offset += limit) {
    const sep = path.includes("?") ? "&" : "?";
    const r = await env.get(key, `${path}${sep}limit=${limit}&offset=${offset}`);
    assert.equal(r.status, 200, `${path} offset ${offset}`);
    const page = r.body.data as Row[];
    assert.ok(page.length <= limit);
    pages.push(page);
    if (page.length < limit) return pages;
  }
}

function assertPartition(pages: Row[][], whole: Row[], total: number) {
  const walked = pages.flat();
  const ids = walked.map((r) => String(r.id));
  assert.equal(new Set(ids).size, ids.length, "no row twice");
  assert.equal(walked.length, total, "none missing");
  assert.deepEqual(walked, whole, "the pages put together are the whole list, in its order");
}

describe("GET /contacts/customers paging", () => {
  test("pages of 7 partition 523 customers; the streamed whole list is the pages' JSON", async () => {
    const account = await seedAccount(env.db);
    await seedCustomers(account.accountId, 523);
    // Another account's customers exist and never show.
    await seedCustomers((await seedAccount(env.db)).accountId, 12);
    const key = await account.key(["read:contacts"]);

    const whole = await raw(key, "/contacts/customers");
    assert.equal(whole.status, 200);
    assert.equal(whole.type, "application/json; charset=utf-8");
    const data = JSON.parse(whole.text).data as Row[];
    assert.equal(data.length, 523);

    const pages = await walk(key, "/contacts/customers", 7);
    assert.equal(pages.length, 75);
    assertPartition(pages, data, 523);
    // Byte for byte what one JSON.stringify of the rows gives: two batches of the cursor joined.
    assert.equal(whole.text, JSON.stringify({ data: pages.flat() }));

    // The order: created_at descending, then id descending.
    for (let i = 1; i < data.length; i += 1) {
      const [a, b] = [data[i - 1] as Row, data[i] as Row];
      const key = (r: Row) => `${r.created_at} ${r.id}`;
      assert.ok(key(a) > key(b), `row ${i} after row ${i - 1}`);
    }
    // Pages of the largest limit agree too, and an offset without a limit streams the rest.
    assertPartition(await walk(key, "/contacts/customers", 500), data, 523);
    const rest = await raw(key, "/contacts/customers?offset=520");
    assert.deepEqual(JSON.parse(rest.text), { data: data.slice(520) });
    assert.equal((await raw(key, "/contacts/customers?offset=600")).text, '{"data":[]}');
  });

  test("an account without customers streams an empty list", async () => {
    const key = await (await seedAccount(env.db)).key(["read:contacts"]);
    const r = await raw(key, "/contacts/customers");
    assert.deepEqual([r.status, r.text], [200, '{"data":[]}']);
    assert.deepEqual(await env.get(key, "/contacts/customers?limit=10"), { status: 200, body: { data: [] } });
  });

  test("limit outside 1–500 and a bad offset are refused, naming the parameter", async () => {
    const key = await (await seedAccount(env.db)).key(["read:contacts"]);
    const refused: [string, string][] = [
      ["limit=0", "limit: must be at least 1"],
      ["limit=501", "limit: must be at most 500"],
      ["limit=1000", "limit: must be at most 500"],
      ["limit=-1", "limit: must be at least 1"],
      ["limit=abc", "limit: must be an integer"],
      ["limit=2.5", "limit: must be an integer"],
      ["limit=", "limit: must be an integer"],
      ["offset=-1", "offset: must be at least 0"],
      ["offset=x", "offset: must be an integer"],
      ["offset=99999999999999999999", "offset: is too large"],
    ];
    for (const [query, error] of refused) {
      for (const path of ["/contacts/customers", "/contacts/purchases"]) {
        assert.deepEqual(
          await env.get(key, `${path}?${query}`),
          { status: 400, body: { error } },
          `${path}?${query}`,
        );
      }
    }
    assert.equal((await env.get(key, "/contacts/customers?limit=500")).status, 200);
    assert.equal((await env.get(key, "/contacts/customers?limit=1")).status, 200);
  });
});

describe("GET /contacts/purchases paging", () => {
  test("pages of 9 partition the window's purchases; the streamed list is the pages' JSON", async () => {
    const account = await seedAccount(env.db);
    await seedCustomers(account.accountId, 523);
    const key = await account.key(["read:contacts"]);

    const whole = await raw(key, "/contacts/purchases");
    assert.equal(whole.status, 200);
    const data = JSON.parse(whole.text).data as Row[];
    assert.equal(data.length, 523);
    const pages = await walk(key, "/contacts/purchases", 9);
    assert.equal(pages.length, 59);
    assertPartition(pages, data, 523);
    assert.equal(whole.text, JSON.stringify({ data: pages.flat() }));
    // Newest first, then id descending.
    for (let i = 1; i < data.length; i += 1) {
      const [a, b] = [data[i - 1] as Row, data[i] as Row];
      const key = (r: Row) => `${r.purchase_date} ${r.id}`;
      assert.ok(key(a) > key(b), `row ${i} after row ${i - 1}`);
    }

    // Paging applies inside the window: 11 and 12 March hold the purchases of two of the five days.
    const window = "/contacts/purchases?from=2026-03-11&to=2026-03-12";
    const inWindow = JSON.parse((await raw(key, window)).text).data as Row[];
    assert.deepEqual(
      inWindow,
      data.filter((r) => String(r.purchase_date) >= "2026-03-11" && String(r.purchase_date) < "2026-03-13"),
    );
    assert.ok(inWindow.length > 0);
    assertPartition(await walk(key, window, 50), inWindow, inWindow.length);
    // A window that is refused stays refused with paging.
    assert.deepEqual(await env.get(key, "/contacts/purchases?from=2026-03-12&to=2026-03-11&limit=5"), {
      status: 400,
      body: { error: "from: must not be after to" },
    });
  });
});

describe("paging in the catalog", () => {
  test("the OpenAPI document, /tools and the index name limit and offset for both lists", async () => {
    const key = await (await seedAccount(env.db)).key(["read:contacts"]);
    const openapi = (await env.app.inject({ url: "/api/v1/openapi.json" })).json();
    const tools = (await env.app.inject({ url: "/api/v1/tools", headers: bearer(key) })).json();
    const index = (await env.app.inject({ url: "/api/v1" })).json();
    const lists: [string, string][] = [
      ["/contacts/customers", "get_contacts_customers"],
      ["/contacts/purchases", "get_contacts_purchases"],
    ];
    for (const [path, tool] of lists) {
      const parameters = openapi.paths[path].get.parameters as { name: string; schema: object }[];
      assert.deepEqual(
        parameters.filter((p) => p.name === "limit" || p.name === "offset").map((p) => [p.name, p.schema]),
        [
          ["limit", { type: "integer", minimum: 1, maximum: 500 }],
          ["offset", { type: "integer", minimum: 0 }],
        ],
        path,
      );
      const manifest = (tools.data.tools as { name: string; inputSchema: { properties: object } }[]).find(
        (t) => t.name === tool,
      );
      assert.ok(
        manifest && "limit" in manifest.inputSchema.properties && "offset" in manifest.inputSchema.properties,
      );
      const listed = (index.data.routes as { path: string; description: string }[]).find((r) =>
        r.path.endsWith(`/api/v1${path}`),
      );
      assert.match(listed?.description ?? "", /limit optional, max 500 .*offset default 0/);
    }
  });
});
