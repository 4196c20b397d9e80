import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createSecretBox } from "../../src/crypto/secret-box.ts";
import { createLocalObjectStore } from "../../src/storage/local-store.ts";
import { createTestFiles, TEST_SITE_URL, testSecrets, useTestApp } from "../helpers/harness.ts";

// The clock the app and the store read: tests move it to check expiry.
let now = new Date("2026-05-01T12:00:00Z");
const clock = () => now;
const files = createTestFiles(clock);
const env = useTestApp({ clock, files });

const ACCOUNT_A = "0a0a0a0a-0000-4000-8000-00000000000a";
const ACCOUNT_B = "0b0b0b0b-0000-4000-8000-00000000000b";
/** 1,000 distinct-ish bytes, so any slice tells where it came from. */
const BYTES = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) % 256));

async function signed(account: string, path: string, contentType = "audio/mpeg", expiresIn = 3600) {
  return files.signedUrl(account, path, { contentType, expiresIn, now });
}

/** GET a signed URL on the app (its path and query; the host is the site URL). */
async function fetchUrl(url: string, headers: Record<string, string> = {}, method: "GET" | "HEAD" = "GET") {
  assert.ok(url.startsWith(`${TEST_SITE_URL}/files/`), url);
  const parsed = new URL(url);
  return env.app.inject({ method, url: parsed.pathname + parsed.search, headers });
}

function withParam(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}

describe("local object store: signed URLs served by the service", () => {
  test("a signed URL fetches the file with the signed media type, before it expires", async () => {
    await files.put(ACCOUNT_A, "calls/one.mp3", BYTES);
    const url = await signed(ACCOUNT_A, "calls/one.mp3");
    assert.match(
      url,
      /^http:\/\/localhost:3000\/files\/0a0a0a0a-0000-4000-8000-00000000000a\/calls\/one\.mp3\?/,
    );
    const res = await fetchUrl(url);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "audio/mpeg");
    assert.equal(res.headers["accept-ranges"], "bytes");
    assert.equal(res.headers["content-length"], "1000");
    assert.deepEqual(res.rawPayload, BYTES);
  });

  test("range requests: a slice (206), a suffix, and an unsatisfiable range (416)", async () => {
    await files.put(ACCOUNT_A, "calls/ranged.mp3", BYTES);
    const url = await signed(ACCOUNT_A, "calls/ranged.mp3");
    const slice = await fetchUrl(url, { range: "bytes=100-109" });
    assert.equal(slice.statusCode, 206);
    assert.equal(slice.headers["content-range"], "bytes 100-109/1000");
    assert.deepEqual(slice.rawPayload, BYTES.subarray(100, 110));
    const suffix = await fetchUrl(url, { range: "bytes=-4" });
    assert.equal(suffix.statusCode, 206);
    assert.deepEqual(suffix.rawPayload, BYTES.subarray(996));
    const beyond = await fetchUrl(url, { range: "bytes=5000-" });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers["content-range"], "bytes */1000");
    assert.deepEqual(beyond.json(), { error: "range_not_satisfiable" });
  });

  test("HEAD answers the headers without the body", async () => {
    await files.put(ACCOUNT_A, "calls/head.mp3", BYTES);
    const res = await fetchUrl(await signed(ACCOUNT_A, "calls/head.mp3"), {}, "HEAD");
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-length"], "1000");
    assert.equal(res.rawPayload.length, 0);
  });

  test("valid until its last second, refused once expired (403 link_expired)", async () => {
    await files.put(ACCOUNT_A, "calls/expiring.mp3", BYTES);
    const url = await signed(ACCOUNT_A, "calls/expiring.mp3", "audio/mpeg", 3600);
    const issued = now;
    try {
      now = new Date(issued.getTime() + 3599_000);
      assert.equal((await fetchUrl(url)).statusCode, 200);
      now = new Date(issued.getTime() + 3600_000);
      const expired = await fetchUrl(url);
      assert.equal(expired.statusCode, 403);
      assert.deepEqual(expired.json(), { error: "link_expired" });
      // Pushing expires forward breaks the signature.
      const extended = withParam(url, "expires", String(Math.floor(issued.getTime() / 1000) + 7200));
      assert.deepEqual((await fetchUrl(extended)).json(), { error: "forbidden" });
    } finally {
      now = issued;
    }
  });

  test("tampered URLs are refused: signature, media type, path, another account's file", async () => {
    await files.put(ACCOUNT_A, "calls/mine.mp3", BYTES);
    await files.put(ACCOUNT_B, "calls/theirs.mp3", Buffer.from("B's recording"));
    const url = await signed(ACCOUNT_A, "calls/mine.mp3");
    const signature = new URL(url).searchParams.get("signature") ?? "";
    const flipped = signature.slice(0, -1) + (signature.endsWith("A") ? "B" : "A");
    const attempts = [
      withParam(url, "signature", flipped),
      withParam(url, "signature", ""),
      withParam(url, "type", "text/html"),
      url.replace("calls/mine.mp3", "calls/other.mp3"),
      // Another account's file under this URL's signature.
      url.replace(`${ACCOUNT_A}/calls/mine.mp3`, `${ACCOUNT_B}/calls/theirs.mp3`),
      url.replace(ACCOUNT_A, ACCOUNT_B),
      // A signature made by another keyring (another instance's secret).
      await createLocalObjectStore({
        root: files.root,
        secrets: createSecretBox([{ id: "test", key: Buffer.alloc(32, 1) }]),
        siteUrl: () => TEST_SITE_URL,
      }).signedUrl(ACCOUNT_A, "calls/mine.mp3", { contentType: "audio/mpeg", expiresIn: 3600, now }),
      `${TEST_SITE_URL}/files/${ACCOUNT_A}/calls/mine.mp3`,
    ];
    for (const attempt of attempts) {
      const res = await fetchUrl(attempt);
      assert.equal(res.statusCode, 403, attempt);
      assert.deepEqual(res.json(), { error: "forbidden" }, attempt);
    }
  });

  test("a validly signed URL of a file that is not there → 404", async () => {
    const res = await fetchUrl(await signed(ACCOUNT_A, "calls/never-written.mp3"));
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: "not_found" });
  });

  test("paths stay inside the account's folder", async () => {
    for (const bad of ["../escape.mp3", "calls/../../x.mp3", "/abs.mp3", ".hidden", "a//b", "a\\b", ""]) {
      await assert.rejects(files.put(ACCOUNT_A, bad, BYTES), /not a valid object path/, bad);
      assert.equal(await files.exists(ACCOUNT_A, bad), false, bad);
    }
    await assert.rejects(files.put("not-an-account", "calls/x.mp3", BYTES));
    const sneaky = await fetchUrl(
      `${TEST_SITE_URL}/files/${ACCOUNT_A}/calls/%2e%2e/%2e%2e/secret.key?expires=9999999999&type=a&signature=x`,
    );
    assert.equal(sneaky.statusCode, 403);
  });

  test("rotation: URLs signed with the previous key still open; keys are per purpose", () => {
    const oldKey = { id: "old", key: Buffer.alloc(32, 2) };
    const newKey = { id: "new", key: Buffer.alloc(32, 3) };
    const before = createSecretBox([oldKey]);
    const after = createSecretBox([newKey, oldKey]);
    const signature = before.sign("file-url", "message");
    assert.match(signature, /^old\.[A-Za-z0-9_-]{43}$/);
    assert.equal(after.verify("file-url", "message", signature), true);
    assert.match(after.sign("file-url", "message"), /^new\./);
    assert.equal(after.verify("file-url", "message!", signature), false);
    assert.equal(after.verify("other-purpose", "message", signature), false);
    assert.equal(createSecretBox([newKey]).verify("file-url", "message", signature), false);
    assert.equal(testSecrets.verify("file-url", "message", "garbage"), false);
  });
});
