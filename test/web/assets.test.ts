import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { signedIn } from "../helpers/web.ts";

const env = useTestApp();

/** The issue's budget for the pages' JavaScript on first load, gzip bytes. */
const FIRST_LOAD_JS_BUDGET = 200_000;

describe("the application's assets and headers", () => {
  test("the overview's scripts weigh under 200 KB gzip on first load, and none is inline", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const page = await web.get("/");
    const scripts = [...page.body.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? "");
    const sources = scripts.flatMap((attrs) => /src="([^"]+)"/.exec(attrs)?.[1] ?? []);
    assert.deepEqual(
      sources.map((s) => s.replace(/\/assets\/[0-9a-f]{12}\//, "")),
      ["app.js", "uplot.js", "chart.js"],
    );
    // Every other script element holds data only (the chart's JSON), which the browser does not run.
    for (const attrs of scripts.filter((a) => !a.includes("src=")))
      assert.match(attrs, /type="application\/json"/);
    let total = 0;
    for (const src of sources) {
      const res = await env.app.inject({ method: "GET", url: src, headers: { "accept-encoding": "gzip" } });
      assert.equal(res.statusCode, 200, src);
      assert.equal(res.headers["content-encoding"], "gzip");
      assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
      total += res.rawPayload.length;
    }
    assert.ok(total < FIRST_LOAD_JS_BUDGET, `${total} B gzip`);
  });

  test("pages forbid inline script, framing and sniffing, and send no referrer", async () => {
    for (const path of ["/", "/sign-in", "/forgot-password"]) {
      const res = await env.app.inject({ method: "GET", url: path });
      assert.equal(res.statusCode, 200, path);
      const csp = String(res.headers["content-security-policy"]);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.equal(res.headers["x-content-type-options"], "nosniff");
      assert.equal(res.headers["x-frame-options"], "DENY");
      assert.equal(res.headers["referrer-policy"], "no-referrer");
      assert.match(String(res.headers["content-type"]), /^text\/html; charset=utf-8/);
    }
  });

  test("an unknown asset is a 404; an API route keeps its JSON 404", async () => {
    const asset = await env.app.inject({ method: "GET", url: "/assets/000000000000/nope.js" });
    assert.equal(asset.statusCode, 404);
    const api = await env.app.inject({ method: "GET", url: "/api/v1/nope" });
    assert.equal(api.statusCode, 404);
    assert.equal(api.json().error, "unknown_route");
  });

  test("a report page with a bad date answers 400 naming it; a CSV export answers text/csv", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const bad = await web.get("/?from=2026-02-30");
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /from: is not a calendar date/);
    const csv = await web.get("/?from=2026-11-01&to=2026-11-02&export=daily");
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers["content-type"]), /^text\/csv/);
    assert.equal(
      csv.body,
      [
        "report_date,leads,applications,bookings,meetings,no_shows,sales,revenue,spend",
        "2026-11-01,0,0,0,0,0,0,0,0",
        "2026-11-02,0,0,0,0,0,0,0,0",
        "",
      ].join("\n"),
    );
  });
});
