import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { useTestApp } from "../helpers/harness.ts";

/** Every address an HTML page loads or links: src and href attributes, and Scalar's data-url. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href|data-url)="([^"]*)"/g)].map((m) => m[1] ?? "");
}

describe("API reference page", () => {
  const ctx = useTestApp();

  test("GET /docs answers HTML naming only same-origin addresses: its script and our OpenAPI document", async () => {
    for (const url of ["/docs", "/docs/"]) {
      const res = await ctx.app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
      assert.equal(res.headers["cache-control"], "no-cache");
      const urls = referencedUrls(res.body);
      assert.equal(urls.length, 3, res.body);
      for (const ref of urls) {
        // Same origin: a path from the root, never a scheme or a protocol-relative host.
        assert.match(ref, /^\/[^/]/, ref);
        assert.doesNotMatch(ref, /:\/\//);
      }
      assert.ok(urls.includes("/api/v1/openapi.json"));
      assert.doesNotMatch(res.body, /cdn\.|jsdelivr|unpkg|fonts\.scalar\.com/);
      // Scalar's own network features are off: no web fonts, no agent.
      assert.match(res.body, /&#34;withDefaultFonts&#34;:false/);
      assert.match(res.body, /&#34;agent&#34;:\{&#34;disabled&#34;:true\}/);
    }
  });

  test("its script answers 200 as JavaScript, cached for a year under a name that changes with it", async () => {
    const page = await ctx.app.inject({ url: "/docs" });
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1] ?? "");
    assert.equal(scripts.length, 1);
    const [src] = scripts;
    assert.match(src ?? "", /^\/docs\/assets\/api-reference\.[A-Za-z0-9_-]{16}\.js$/);

    const plain = await ctx.app.inject({ url: src });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers["content-type"], "text/javascript; charset=utf-8");
    assert.equal(plain.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(plain.headers["x-content-type-options"], "nosniff");
    assert.ok(plain.rawPayload.length > 1_000_000, "the whole standalone bundle");
    assert.ok(plain.body.includes("createApiReference"));

    const zipped = await ctx.app.inject({ url: src, headers: { "accept-encoding": "gzip, br" } });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers["content-encoding"], "gzip");
    assert.ok(zipped.rawPayload.length < plain.rawPayload.length / 2);
    assert.deepEqual(gunzipSync(zipped.rawPayload), plain.rawPayload);
    assert.notEqual(zipped.headers.etag, plain.headers.etag);

    const again = await ctx.app.inject({
      url: src,
      headers: { "if-none-match": String(plain.headers.etag) },
    });
    assert.equal(again.statusCode, 304);

    const other = await ctx.app.inject({ url: "/docs/assets/api-reference.0000000000000000.js" });
    assert.equal(other.statusCode, 404);
    assert.equal(other.json().error, "unknown_route");
  });

  test("the document it reads is served on the same origin, without a key", async () => {
    const res = await ctx.app.inject({ url: "/api/v1/openapi.json" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().info.title, "Ascribe API");
  });
});
