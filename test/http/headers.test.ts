import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import type { InjectOptions } from "fastify";
import { REFERENCE_CSP } from "../../src/catalog/reference-page.ts";
import { bearer, type SeededAccount, seedAccount, seedRecordedCall, useTestApp } from "../helpers/harness.ts";

const t = useTestApp();

describe("X-Content-Type-Options and the pages' Content-Security-Policy", () => {
  let account: SeededAccount;
  let key = "";
  before(async () => {
    account = await seedAccount(t.db);
    key = await account.key(["*"]);
  });

  test("every kind of answer carries X-Content-Type-Options: nosniff", async () => {
    const callId = await seedRecordedCall(t.db, t.app.files, account.accountId);
    const recording = await t.get(key, `/calls/recording?id=${callId}`);
    const fileUrl = new URL(String(recording.body.data.audio_url));
    const script = await t.app.inject({ url: "/docs" });
    const assetPath = /src="([^"]+\.js)"/.exec(script.body)?.[1] ?? "";
    const requests: [string, InjectOptions][] = [
      ["API 200", { url: "/api/v1/icp/criteria", headers: bearer(key) }],
      ["API 401", { url: "/api/v1/icp/criteria" }],
      ["API 400", { url: "/api/v1/events?from=nope", headers: bearer(key) }],
      ["index", { url: "/api/v1" }],
      ["404", { url: "/nowhere" }],
      ["405", { method: "TRACE", url: "/api/v1/events" }],
      ["collect 400", { method: "POST", url: "/api/collect", payload: "{}" }],
      ["track.js", { url: "/api/track.js" }],
      ["/files", { url: fileUrl.pathname + fileUrl.search }],
      ["/docs", { url: "/docs" }],
      ["/docs asset", { url: assetPath }],
      ["a page", { url: "/sign-in" }],
      [
        "/mcp",
        { method: "POST", url: "/mcp", payload: "{}", headers: { "content-type": "application/json" } },
      ],
    ];
    for (const [name, request] of requests) {
      const res = await t.app.inject(request);
      assert.ok(res.statusCode < 500, `${name}: ${res.statusCode}`);
      assert.equal(res.headers["x-content-type-options"], "nosniff", `${name} (${res.statusCode})`);
    }
  });

  test("/docs and the application's pages carry a CSP refusing to be framed", async () => {
    const docs = await t.app.inject({ url: "/docs" });
    assert.equal(docs.statusCode, 200);
    assert.equal(docs.headers["content-security-policy"], REFERENCE_CSP);
    assert.match(REFERENCE_CSP, /(^|; )frame-ancestors 'none'(;|$)/);
    assert.match(REFERENCE_CSP, /(^|; )script-src 'self'(;|$)/);
    assert.doesNotMatch(REFERENCE_CSP, /script-src[^;]*'unsafe-(inline|eval)'/);
    for (const url of ["/sign-in", "/forgot-password", "/"]) {
      const page = await t.app.inject({ url });
      assert.match(String(page.headers["content-security-policy"]), /(^|; )frame-ancestors 'none'(;|$)/, url);
    }
  });
});
