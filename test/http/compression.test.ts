import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { TRACK_SCRIPT_PATH } from "../../src/tracking/track-script-route.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

/*
 * Answers compressed by Accept-Encoding (http/compression.ts): brotli or gzip from 1 KB up, the same
 * JSON whatever the encoding, streamed lists included, and the headers of every answer kept.
 */

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });
let key = "";

/** `count` customers with a purchase each: a list of tens of KB. */
async function seedCustomers(accountId: string, count: number) {
  await env.db.admin(accountId, async (tx) => {
    await tx.execute(sql`
      insert into contacts (account_id, id, email, name)
      select ${accountId}, gen_random_uuid(), 'c' || lpad(g::text, 4, '0') || '@x.test', 'Client ' || g
      from generate_series(1, ${count}::int) g`);
    await tx.execute(sql`
      insert into purchases (account_id, id, contact_id, purchase_date, product_key, amount)
      select ${accountId}, 'p-' || c.email, c.id, timestamptz '2026-03-10T10:00:00Z', 'plan-a', 120
      from contacts c where c.account_id = ${accountId}`);
    await tx.execute(sql`
      insert into customers (account_id, id, contact_id, created_at)
      select ${accountId}, gen_random_uuid(), c.id, timestamptz '2026-03-01T00:00:00Z'
      from contacts c where c.account_id = ${accountId}`);
  });
}

/** The account and its customers, made by the first test that needs them. */
let seeded: Promise<void> | null = null;
function seed(): Promise<void> {
  seeded ??= (async () => {
    const account = await seedAccount(env.db);
    key = await account.key();
    await seedCustomers(account.accountId, 300);
  })();
  return seeded;
}

async function fetchAs(url: string, acceptEncoding: string | null, withKey = true) {
  await seed();
  const headers: Record<string, string> = withKey ? bearer(key) : {};
  if (acceptEncoding !== null) headers["accept-encoding"] = acceptEncoding;
  const r = await env.app.inject({ method: "GET", url, headers });
  const encoding = r.headers["content-encoding"];
  const bytes = r.rawPayload;
  const decoded =
    encoding === "br" ? brotliDecompressSync(bytes) : encoding === "gzip" ? gunzipSync(bytes) : bytes;
  return { r, encoding, bytes, text: decoded.toString("utf8") };
}

/** The headers every answer carries (app.ts), compressed or not. */
function assertCommonHeaders(headers: Record<string, unknown>) {
  assert.equal(headers["cache-control"], "private, no-store");
  assert.equal(headers["x-content-type-options"], "nosniff");
  assert.equal(headers["x-ratelimit-limit"], "600");
  assert.ok(headers["x-ratelimit-remaining"] !== undefined);
  assert.ok(headers["x-request-id"]);
}

const LARGE = [
  // Streamed (a Node Readable), then a page answered whole, then the index and OpenAPI (no key).
  { url: "/api/v1/contacts/customers", keyed: true },
  { url: "/api/v1/contacts/customers?limit=500", keyed: true },
  { url: "/api/v1/contacts/purchases?from=2026-03-01&to=2026-03-31", keyed: true },
  { url: "/api/v1", keyed: false },
  { url: "/api/v1/openapi.json", keyed: false },
];

describe("the same JSON under every encoding", () => {
  for (const { url, keyed } of LARGE) {
    test(url, async () => {
      const identity = await fetchAs(url, null, keyed);
      assert.equal(identity.r.statusCode, 200);
      assert.equal(identity.encoding, undefined, "no Accept-Encoding: sent as is");
      assert.ok(identity.bytes.length > 1024, `large enough to compress (${identity.bytes.length} B)`);
      const expected = JSON.parse(identity.text);
      if (url.includes("customers")) assert.equal(expected.data.length, 300);

      const asked = await fetchAs(url, "identity", keyed);
      assert.equal(asked.encoding, undefined, "Accept-Encoding: identity: sent as is");
      assert.deepEqual(JSON.parse(asked.text), expected);

      for (const [accept, encoding] of [
        ["gzip", "gzip"],
        ["br", "br"],
        // A browser's header: brotli preferred.
        ["gzip, deflate, br, zstd", "br"],
        ["br;q=0.5, gzip", "gzip"],
        ["*", "gzip"],
      ] as const) {
        const got = await fetchAs(url, accept, keyed);
        assert.equal(got.r.statusCode, 200);
        assert.equal(got.encoding, encoding, `Accept-Encoding: ${accept}`);
        assert.match(String(got.r.headers.vary), /accept-encoding/i);
        assert.match(String(got.r.headers["content-type"]), /^application\/json/);
        assert.ok(
          got.bytes.length < identity.bytes.length / 3,
          `${encoding} shrinks JSON (${got.bytes.length} B)`,
        );
        assertCommonHeaders(got.r.headers);
        assert.deepEqual(JSON.parse(got.text), expected, `${accept}: the same JSON`);
      }
      // Encodings not offered: as is.
      assert.equal((await fetchAs(url, "deflate", keyed)).encoding, undefined);
    });
  }
});

test("the levels: brotli quality 4 and gzip level 6 (the bytes of an answer compressed in one go)", async () => {
  // Between 1 KB and 4 KB: compressed synchronously on any machine, so the bytes are reproducible.
  const url = "/api/v1/contacts/customers?limit=5";
  const identity = await fetchAs(url, null);
  assert.ok(identity.bytes.length > 1024 && identity.bytes.length < 4096, `${identity.bytes.length} B`);
  const br = await fetchAs(url, "br");
  const expectedBr = brotliCompressSync(identity.bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  assert.deepEqual(br.bytes, expectedBr);
  assert.equal(br.r.headers["content-length"], String(expectedBr.length));
  const gz = await fetchAs(url, "gzip");
  assert.deepEqual(gz.bytes, gzipSync(identity.bytes, { level: 6 }));
});

test("under 1 KB: never compressed, but Vary says it could be", async () => {
  const small = await fetchAs("/api/v1/contacts/customers?limit=1", "gzip, br");
  assert.equal(small.r.statusCode, 200);
  assert.ok(small.bytes.length < 1024, `${small.bytes.length} B`);
  assert.equal(small.encoding, undefined);
  assert.equal(small.r.headers.vary, "accept-encoding");
  assert.equal(JSON.parse(small.text).data.length, 1);
});

test("errors keep their headers and body with compression asked", async () => {
  await seed();
  const r = await env.app.inject({
    method: "GET",
    url: "/api/v1/contacts/customers",
    headers: { authorization: "Bearer svc_sk_live_nope", "accept-encoding": "br, gzip" },
  });
  assert.equal(r.statusCode, 401);
  assert.deepEqual(r.json(), { error: "invalid_or_missing_api_key" });
  assertCommonHeaders(r.headers);
  const invalid = await fetchAs("/api/v1/contacts/customers?limit=abc", "br, gzip");
  assert.equal(invalid.r.statusCode, 400);
  assert.equal(invalid.encoding, undefined);
  assertCommonHeaders(invalid.r.headers);
});

test("a request body sent gzipped is not inflated by the server", async () => {
  await seed();
  const r = await env.app.inject({
    method: "PUT",
    url: "/api/v1/goals",
    headers: { ...bearer(key), "content-type": "application/json", "content-encoding": "gzip" },
    payload: gzipSync(JSON.stringify({ goals: {} })),
  });
  assert.equal(r.statusCode, 400, "the bytes are read as they came: not JSON");
});

test("the tracking script stays precompressed: gzip with its own ETag, never re-encoded", async () => {
  const gz = await env.app.inject({
    method: "GET",
    url: TRACK_SCRIPT_PATH,
    headers: { "accept-encoding": "gzip, br" },
  });
  assert.equal(gz.statusCode, 200);
  assert.equal(gz.headers["content-encoding"], "gzip");
  assert.match(String(gz.headers.etag), /-gzip"$/);
  const brOnly = await env.app.inject({
    method: "GET",
    url: TRACK_SCRIPT_PATH,
    headers: { "accept-encoding": "br" },
  });
  assert.equal(brOnly.headers["content-encoding"], undefined, "brotli-only: the identity bytes, as they are");
  assert.doesNotMatch(String(brOnly.headers.etag), /-gzip"$/);
  assert.equal(gunzipSync(gz.rawPayload).toString("utf8"), brOnly.body);
});
