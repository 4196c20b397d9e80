import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";
import { click, worked } from "../helpers/worked-example.ts";

/*
 * GET /attribution/models on the worked example of docs/attribution.md ("Models"): Ann's one sale
 * of March 12 (1000 + a 500 installment, 200 refunded: revenue 1500, net 1300) after ad A (March 2),
 * ad B (March 4) and a newsletter visit (March 6). Her lead and booking inherited B and the email's
 * source: they repeat touches already in her journey and are not touches of their own.
 */

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });
const MARCH = "?from=2026-03-01&to=2026-03-31";

const adRow = (id: string, spend: number) => ({
  key: `meta/${id}`,
  platform: "meta",
  ad_id: id,
  ad_name: `Ad ${id}`,
  campaign_id: "C1",
  campaign_name: "Spring",
  channel: null,
  spend,
  paths_used: null,
  ci95: null,
});
const channelRow = (channel: string) => ({
  key: channel,
  platform: null,
  ad_id: null,
  ad_name: null,
  campaign_id: null,
  campaign_name: null,
  channel,
  spend: null,
  roi_gross: null,
  roi_net: null,
  paths_used: null,
  ci95: null,
});

async function models(query: string, fixture = worked) {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, fixture);
  const r = await env.get(await account.key(["read:attribution"]), `/attribution/models${MARCH}&${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

describe("GET /attribution/models", () => {
  test("linear at the ad level: A and B half each; ROI on each ad's March spend", async () => {
    assert.deepEqual(await models("model=linear"), [
      // (750 − 100) / 100 and (650 − 100) / 100
      {
        ...adRow("A", 100),
        credited_sales: 0.5,
        credited_revenue: 750,
        credited_net_revenue: 650,
        roi_gross: 6.5,
        roi_net: 5.5,
        share: 0.5,
      },
      // (750 − 50) / 50 and (650 − 50) / 50
      {
        ...adRow("B", 50),
        credited_sales: 0.5,
        credited_revenue: 750,
        credited_net_revenue: 650,
        roi_gross: 14,
        roi_net: 12,
        share: 0.5,
      },
    ]);
  });

  test("time decay, half-life 7 days: A 10 days before the sale, B 8", async () => {
    // 2^(−10/7) : 2^(−8/7) = 0.450651 : 0.549349; of 1500: 675.98 (its extra cent by largest
    // remainder) and 824.02; of 1300: 585.85 and 714.15.
    const rows = await models("model=time_decay");
    assert.deepEqual(
      rows.map((r: Record<string, unknown>) => [
        r.key,
        r.credited_sales,
        r.credited_revenue,
        r.credited_net_revenue,
      ]),
      [
        ["meta/B", 0.5493, 824.02, 714.15],
        ["meta/A", 0.4507, 675.98, 585.85],
      ],
    );
  });

  test("first and last touch agree with /attribution's first-touch and last-touch columns", async () => {
    const first = await models("model=first_touch");
    assert.deepEqual(
      first.map((r: Record<string, unknown>) => [r.key, r.credited_sales, r.credited_revenue]),
      [
        ["meta/A", 1, 1500],
        ["meta/B", 0, 0], // spent in March, credited nothing
      ],
    );
    const last = await models("model=last_touch&lookback_days=365");
    assert.deepEqual(
      last.map((r: Record<string, unknown>) => [r.key, r.credited_sales, r.credited_revenue]),
      [
        ["meta/B", 1, 1500],
        ["meta/A", 0, 0],
      ],
    );
  });

  test("the email is a channel touch: credited at the channel level, never at the ad level", async () => {
    assert.deepEqual(await models("model=last_touch&level=channel"), [
      {
        ...channelRow("email"),
        credited_sales: 1,
        credited_revenue: 1500,
        credited_net_revenue: 1300,
        share: 1,
      },
    ]);
    assert.deepEqual(await models("model=linear&level=channel"), [
      // 2 of 3 touches paid social; 1300 × 2/3 = 866.666… → 866.67 and 433.33
      {
        ...channelRow("paid_social"),
        credited_sales: 0.6667,
        credited_revenue: 1000,
        credited_net_revenue: 866.67,
        share: 0.6667,
      },
      {
        ...channelRow("email"),
        credited_sales: 0.3333,
        credited_revenue: 500,
        credited_net_revenue: 433.33,
        share: 0.3333,
      },
    ]);
    for (const model of [
      "first_touch",
      "last_touch",
      "last_non_direct",
      "linear",
      "time_decay",
      "position_based",
      "markov",
      "shapley",
    ]) {
      const rows = await models(`model=${model}`);
      assert.deepEqual(
        rows.map((r: Record<string, unknown>) => r.key).sort(),
        ["meta/A", "meta/B"],
        `${model}: no email row at the ad level`,
      );
    }
  });

  test("a sale without any touch goes to (none); the columns sum to the counted sales and revenue", async () => {
    const rows = await models("model=position_based", {
      ...worked,
      events: [
        ...(worked.events ?? []),
        {
          id: "s2",
          event_type: "sale",
          event_datetime: at("2026-03-15"),
          contact_email: "bob@x.test",
          amount: 300,
        },
      ],
    });
    assert.deepEqual(
      rows.map((r: Record<string, unknown>) => [
        r.key,
        r.credited_sales,
        r.credited_revenue,
        r.credited_net_revenue,
        r.spend,
        r.share,
      ]),
      [
        // two positions: 0.4 / 0.8 each
        ["meta/A", 0.5, 750, 650, 100, 0.25],
        ["meta/B", 0.5, 750, 650, 50, 0.25],
        ["(none)", 1, 300, 300, null, 0.5],
      ],
    );
  });

  test("Markov and Shapley at the campaign level carry the paths they used", async () => {
    const fixture = {
      ...worked,
      // Dan clicks ad A and buys nothing: a path to null.
      touchpoints: [...(worked.touchpoints ?? []), click("d1", "dan@x.test", "A", "2026-03-08")],
    };
    for (const model of ["markov", "shapley"]) {
      const rows = await models(`model=${model}&level=campaign`, fixture);
      assert.deepEqual(
        rows.map((r: Record<string, unknown>) => [
          r.key,
          r.campaign_id,
          r.campaign_name,
          r.credited_sales,
          r.credited_revenue,
          r.spend,
          r.paths_used,
        ]),
        // Markov: Ann's path converted, Dan's did not (2 paths); Shapley reads converting journeys only.
        [["meta/C1", "C1", "Spring", 1, 1500, 150, model === "markov" ? 2 : 1]],
        model,
      );
    }
  });

  test("bad parameters are refused with a 400 naming them", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:attribution"]);
    for (const [query, field] of [
      ["model=u_shaped", "model"],
      ["model=linear&level=adset", "level"],
      ["model=linear&lookback_days=366", "lookback_days"],
      ["model=markov&order=4", "order"],
      ["model=time_decay&half_life_days=0", "half_life_days"],
      ["model=position_based&first_weight=0.7&last_weight=0.4", "first_weight"],
    ]) {
      const r = await env.get(key, `/attribution/models?${query}`);
      assert.equal(r.status, 400, query);
      assert.match(JSON.stringify(r.body), new RegExp(field as string), query);
    }
  });
});
