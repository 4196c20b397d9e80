import assert from "node:assert/strict";
import { test } from "node:test";
import { microsToUnits, spendQuery } from "../../src/connectors/google-ads-spend.ts";
import { metaUsage } from "../../src/connectors/meta-insights.ts";
import { DEFAULT_SPEND_HTTP, retryAfterMs, withBackoff } from "../../src/connectors/spend-http.ts";

test("micros to currency units, digit by digit", () => {
  assert.equal(microsToUnits("1234567"), 1.234567);
  assert.equal(microsToUnits("5"), 0.000005);
  assert.equal(microsToUnits("0"), 0);
  assert.equal(microsToUnits("250000000"), 250);
});

test("the GAQL query names the documented ad_group_ad fields and the day range", () => {
  assert.equal(
    spendQuery("2026-03-01", "2026-03-31"),
    "SELECT segments.date, campaign.id, campaign.name, ad_group.id, ad_group.name, ad_group_ad.ad.id, ad_group_ad.ad.name, metrics.cost_micros, metrics.clicks, metrics.impressions, customer.currency_code FROM ad_group_ad WHERE segments.date BETWEEN '2026-03-01' AND '2026-03-31'",
  );
});

test("Retry-After in seconds or as an HTTP date", () => {
  assert.equal(retryAfterMs(new Headers({ "retry-after": "7" })), 7_000);
  const now = Date.parse("2026-03-01T10:00:00Z");
  assert.equal(retryAfterMs(new Headers({ "retry-after": "Sun, 01 Mar 2026 10:00:30 GMT" }), now), 30_000);
  assert.equal(retryAfterMs(new Headers()), null);
});

test("Meta's usage headers: the highest percentage and the wait to regain access", () => {
  const headers = new Headers({
    "x-app-usage": JSON.stringify({ call_count: 12, total_cputime: 95, total_time: 40 }),
    "x-business-use-case-usage": JSON.stringify({
      "99": [
        {
          type: "ads_insights",
          call_count: 30,
          total_cputime: 10,
          total_time: 20,
          estimated_time_to_regain_access: 3,
        },
      ],
    }),
  });
  assert.deepEqual(metaUsage(headers), { pct: 95, regainMs: 180_000 });
  assert.deepEqual(metaUsage(new Headers({ "x-app-usage": "not json" })), { pct: 0, regainMs: null });
});

test("back-off doubles without a given wait, and refuses a wait past the limit with its length", async () => {
  const slept: number[] = [];
  const http = { ...DEFAULT_SPEND_HTTP, sleep: async (ms: number) => void slept.push(ms), maxAttempts: 4 };
  let n = 0;
  const done = await withBackoff(http, "Meta insights", async () =>
    ++n < 4 ? { retry: null, why: "busy" } : { done: "ok" },
  );
  assert.equal(done, "ok");
  assert.deepEqual(slept, [1_000, 2_000, 4_000]);
  await assert.rejects(
    withBackoff(http, "Meta insights", async () => ({
      retry: 30 * 60_000,
      why: "Meta rate limit (code 17)",
    })),
    /^SpendSyncError: Meta insights: Meta rate limit \(code 17\); the vendor asks to wait 30 min, the next sync will retry$/,
  );
  await assert.rejects(
    withBackoff(http, "Google Ads searchStream", async () => ({ retry: 10, why: "unavailable" })),
    /Google Ads searchStream: unavailable, still after 4 tries/,
  );
});
