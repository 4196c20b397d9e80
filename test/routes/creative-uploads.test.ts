import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { labelSlug } from "../../src/creatives/uploads.ts";
import { rows } from "../../src/db/client.ts";
import type { ApiError } from "../../src/http/errors.ts";
import { createTestFiles, seedAccount, TEST_SITE_URL, useTestApp } from "../helpers/harness.ts";

let now = new Date("2026-03-31T12:00:00Z");
const clock = () => now;
const files = createTestFiles(clock);
const env = useTestApp({ clock, files });

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

const post = (url: string, key: string, body: unknown) => env.send("POST", url, key, body);

/** PUT to an upload_url (relative to the test site). */
function put(uploadUrl: string, contentType: string, body: Buffer, headers: Record<string, string> = {}) {
  return env.app.inject({
    method: "PUT",
    url: uploadUrl.slice(TEST_SITE_URL.length),
    headers: { "content-type": contentType, ...headers },
    payload: body,
  });
}

async function writer() {
  const account = await seedAccount(env.db);
  return { account, key: await account.key(["write:creatives"]) };
}

async function uploaded(key: string, contentType = "image/png", label = "Spring hero") {
  const auth = (await post("/creatives/upload-url", key, { content_type: contentType, label })).json().data;
  const res = await put(auth.upload_url, contentType, PNG);
  assert.equal(res.statusCode, 200, res.body);
  return auth as { asset_url: string; upload_url: string; path: string; token: string };
}

const creativesOf = (accountId: string) =>
  env.db.admin(accountId, (tx) =>
    rows<{ external_ref: string; angle: string | null; asset_url: string | null; asset_kind: string | null }>(
      tx,
      sql`select external_ref, angle, asset_url, asset_kind from creatives where account_id = ${accountId} order by external_ref`,
    ),
  );

describe("creative uploads", () => {
  test("upload-url → PUT → import: the file lands in the account's folder; the creative joins the reserve", async () => {
    const { account, key } = await writer();
    const auth = await post("/creatives/upload-url", key, {
      content_type: "image/png",
      label: "Spring hero",
    });
    assert.equal(auth.statusCode, 200, auth.body);
    const data = auth.json().data;
    assert.deepEqual(Object.keys(data).sort(), [
      "asset_url",
      "content_type",
      "expires_in",
      "max_bytes",
      "path",
      "token",
      "upload_url",
    ]);
    assert.match(data.path, /^creatives\/[0-9a-f-]{36}-spring-hero\.png$/);
    assert.equal(data.asset_url, `${TEST_SITE_URL}/files/${account.accountId}/${data.path}`);
    assert.equal(data.content_type, "image/png");
    assert.equal(data.expires_in, 900);
    assert.equal(data.max_bytes, 30 * 1024 * 1024);
    assert.ok(data.upload_url.startsWith(`${TEST_SITE_URL}/uploads/${account.accountId}/`));
    assert.ok(data.upload_url.includes(`token=${data.token}`));

    const stored = await put(data.upload_url, "image/png", PNG);
    assert.equal(stored.statusCode, 200, stored.body);
    assert.deepEqual(stored.json().data, {
      asset_url: data.asset_url,
      path: data.path,
      content_type: "image/png",
      size_bytes: PNG.length,
    });
    assert.deepEqual(readFileSync(join(files.root, account.accountId, data.path)), PNG);

    const imported = await post("/creatives/import", key, {
      external_ref: "hero-1",
      creative: { angle: "pain", headline: "Stop guessing", asset_url: data.asset_url },
    });
    assert.equal(imported.statusCode, 200, imported.body);
    const result = imported.json().data;
    assert.deepEqual(
      { ...result, id: typeof result.id },
      {
        id: "string",
        external_ref: "hero-1",
        angle: "pain",
        score: null,
        en_attente: 1,
      },
    );
    assert.deepEqual(await creativesOf(account.accountId), [
      { external_ref: "hero-1", angle: "pain", asset_url: data.asset_url, asset_kind: "image" },
    ]);
  });

  test("a replay updates the unpublished creative; a published one is never overwritten, its id answered", async () => {
    const { account, key } = await writer();
    const first = (
      await post("/creatives/import", key, { external_ref: "r1", creative: { angle: "pain" } })
    ).json().data;
    const replay = (
      await post("/creatives/import", key, { external_ref: "r1", creative: { angle: "gain" } })
    ).json().data;
    assert.deepEqual(replay, { id: first.id, external_ref: "r1", angle: "gain", score: null, en_attente: 1 });
    await post("/creatives/import", key, { external_ref: "r2", creative: { angle: "proof" } });
    await env.db.admin(account.accountId, (tx) =>
      tx.execute(
        sql`update creatives set is_published = true where account_id = ${account.accountId} and external_ref = 'r1'`,
      ),
    );
    const onPublished = (
      await post("/creatives/import", key, { external_ref: "r1", creative: { angle: "new" } })
    ).json().data;
    assert.deepEqual(onPublished, {
      id: first.id,
      external_ref: "r1",
      angle: "gain",
      score: null,
      en_attente: 1,
    });
    assert.deepEqual(
      (await creativesOf(account.accountId)).map((c) => [c.external_ref, c.angle]),
      [
        ["r1", "gain"],
        ["r2", "proof"],
      ],
    );
  });

  test("concurrent imports of one external_ref make exactly one creative", async () => {
    const { account, key } = await writer();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post("/creatives/import", key, { external_ref: "race", creative: { angle: `a${i}` } }),
      ),
    );
    const ids = new Set(answers.map((a) => a.json().data.id));
    assert.equal(ids.size, 1);
    assert.equal((await creativesOf(account.accountId)).length, 1);
  });

  test("asset_url: another account's, a foreign URL, an edited one or one never uploaded to → 400, nothing created", async () => {
    const { account, key } = await writer();
    const other = await writer();
    const theirs = await uploaded(other.key);
    const pending = (await post("/creatives/upload-url", key, { content_type: "image/png" })).json().data;
    const mine = await uploaded(key);
    const cases: [string, RegExp][] = [
      [theirs.asset_url, /not an asset_url this account received/],
      [theirs.asset_url.replace(other.account.accountId, account.accountId), /not an asset_url/],
      ["https://cdn.example.com/hero.png", /not an asset_url/],
      [`${mine.asset_url}?v=2`, /not an asset_url/],
      [mine.asset_url.toUpperCase(), /not an asset_url/],
      [pending.asset_url, /no file was uploaded to it yet/],
    ];
    for (const [assetUrl, message] of cases) {
      const res = await post("/creatives/import", key, {
        external_ref: "x",
        creative: { asset_url: assetUrl },
      });
      assert.equal(res.statusCode, 400, assetUrl);
      assert.match(res.json().error, message);
    }
    const kind = await post("/creatives/import", key, {
      external_ref: "x",
      creative: { asset_url: mine.asset_url, asset_kind: "video" },
    });
    assert.equal(kind.statusCode, 400);
    assert.match(kind.json().error, /^creative\.asset_kind: /);
    assert.deepEqual(await creativesOf(account.accountId), []);
  });

  test("label: traversal and odd characters become a slug inside creatives/; over 60 characters → 400", async () => {
    const { key } = await writer();
    for (const [label, slug] of [
      ["../../etc/passwd", "etc-passwd"],
      ["..\\..\\secret.key", "secret-key"],
      ["/absolute/path.png", "absolute-path-png"],
      ["Été Promo — 50 %", "ete-promo-50"],
      ["...", "creative"],
      [`${"a".repeat(58)}-b`, `${"a".repeat(58)}-b`],
    ]) {
      const res = await post("/creatives/upload-url", key, { content_type: "image/webp", label });
      assert.equal(res.statusCode, 200, label);
      assert.match(res.json().data.path, new RegExp(`^creatives/[0-9a-f-]{36}-${slug}\\.webp$`), label);
    }
    assert.equal(labelSlug(`${"x".repeat(59)} yz`), "x".repeat(59), "cut at 60, no trailing hyphen");
    const long = await post("/creatives/upload-url", key, {
      content_type: "image/png",
      label: "a".repeat(61),
    });
    assert.equal(long.statusCode, 400);
    assert.deepEqual(long.json(), { error: "label: at most 60 characters" });
  });

  test("content_type: one of the four, else 400; missing → 400", async () => {
    const { key } = await writer();
    for (const type of ["image/jpeg", "image/png", "image/webp", "video/mp4"]) {
      assert.equal((await post("/creatives/upload-url", key, { content_type: type })).statusCode, 200, type);
    }
    for (const type of ["image/gif", "text/html", "video/quicktime", "IMAGE/PNG", ""]) {
      const res = await post("/creatives/upload-url", key, { content_type: type });
      assert.equal(res.statusCode, 400, type);
      assert.match(res.json().error, /content_type/);
    }
    const missing = await post("/creatives/upload-url", key, { label: "x" });
    assert.deepEqual(missing.json(), {
      error: "content_type is required (image/jpeg, image/png, image/webp, video/mp4)",
    });
  });

  test("the PUT: wrong type, oversize, wrong token, reuse and expiry are refused", async () => {
    const { key } = await writer();
    const auth = (await post("/creatives/upload-url", key, { content_type: "image/png" })).json().data;
    const wrongType = await put(auth.upload_url, "image/jpeg", PNG);
    assert.equal(wrongType.statusCode, 400);
    assert.deepEqual(wrongType.json(), { error: "Content-Type must be image/png, as authorized" });
    const oversize = await put(auth.upload_url, "image/png", PNG, {
      "content-length": String(31 * 1024 * 1024),
    });
    assert.equal(oversize.statusCode, 413);
    assert.deepEqual(oversize.json(), { error: "payload_too_large", max_bytes: 30 * 1024 * 1024 });
    const badToken = await put(auth.upload_url.replace(/token=[^&]+/, "token=forged"), "image/png", PNG);
    assert.equal(badToken.statusCode, 403);
    assert.deepEqual(badToken.json(), { error: "forbidden" });
    const noToken = await put(auth.upload_url.split("?")[0] ?? "", "image/png", PNG);
    assert.equal(noToken.statusCode, 403);
    // After those refusals the authorization is still good, once.
    assert.equal((await put(auth.upload_url, "image/png", PNG)).statusCode, 200);
    const reused = await put(auth.upload_url, "image/png", PNG);
    assert.equal(reused.statusCode, 409);
    assert.deepEqual(reused.json(), { error: "upload_already_used" });

    const late = (await post("/creatives/upload-url", key, { content_type: "image/png" })).json().data;
    const saved = now;
    now = new Date(saved.getTime() + 900_000); // exactly 15 minutes later: expired
    try {
      const expired = await put(late.upload_url, "image/png", PNG);
      assert.equal(expired.statusCode, 403);
      assert.deepEqual(expired.json(), { error: "link_expired" });
    } finally {
      now = saved;
    }
  });

  test("the store refuses a stream past its cap and keeps nothing", async () => {
    const { account } = await writer();
    async function* chunks() {
      yield Buffer.alloc(6);
      yield Buffer.alloc(6);
    }
    await assert.rejects(
      files.write(account.accountId, "creatives/capped.png", chunks(), { maxBytes: 10 }),
      (err: ApiError) => err.code === "payload_too_large",
    );
    assert.equal(await files.exists(account.accountId, "creatives/capped.png"), false);
    assert.equal(await files.write(account.accountId, "creatives/fits.png", chunks(), { maxBytes: 12 }), 12);
  });

  test("external_ref: missing or blank → 400 external_ref is required; over 200 → 400; unknown creative field → 400", async () => {
    const { account, key } = await writer();
    for (const body of [
      {},
      { external_ref: null },
      { external_ref: "  " },
      { external_ref: 12 },
      { creative: {} },
    ]) {
      const res = await post("/creatives/import", key, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(res.json(), { error: "external_ref is required" });
    }
    const long = await post("/creatives/import", key, { external_ref: "r".repeat(201) });
    assert.deepEqual(long.json(), { error: "external_ref: at most 200 characters" });
    assert.equal((await post("/creatives/import", key, { external_ref: "r".repeat(200) })).statusCode, 200);
    const unknown = await post("/creatives/import", key, { external_ref: "u", creative: { angel: "typo" } });
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.json().error, /angel/);
    const badUrl = await post("/creatives/import", key, {
      external_ref: "u",
      creative: { destination_url: "javascript:alert(1)" },
    });
    assert.match(badUrl.json().error, /^creative\.destination_url: /);
    assert.equal((await creativesOf(account.accountId)).length, 1);
  });
});
