import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

const meta = { platform: "meta", campaign_id: "C1", campaign_name: "Camp One" };
const brand = { platform: "google", campaign_id: "GC", campaign_name: "Brand" };
const media = (clicks: number, impressions: number, reach: number) => ({
  total_clicks: clicks,
  total_impressions: impressions,
  total_reach: reach,
});

/** Spend of March 2026 (UTC account); the rows below are worked out by hand from these records. */
const spend: Fixture = {
  spend: [
    {
      ...meta,
      ad_id: "A1",
      ad_name: "Ad One",
      adset_id: "S1",
      adset_name: "Set One",
      date: "2026-03-05",
      total_spend: 100,
      ...media(10, 1000, 800),
    },
    {
      ...meta,
      ad_id: "A1",
      ad_name: "Ad One",
      adset_id: "S1",
      adset_name: "Set One",
      date: "2026-03-06",
      total_spend: 50.25,
      ...media(5, 500, 300),
    },
    // The day before the window: left out everywhere.
    {
      ...meta,
      ad_id: "A1",
      ad_name: "Ad One",
      adset_id: "S1",
      adset_name: "Set One",
      date: "2026-02-28",
      total_spend: 999,
      ...media(99, 9999, 999),
    },
    {
      ...meta,
      ad_id: "A2",
      ad_name: "Ad Two",
      adset_id: "S2",
      adset_name: "Set Two",
      date: "2026-03-10",
      total_spend: 80,
      ...media(8, 700, 600),
    },
    {
      ...brand,
      ad_id: "G1",
      ad_name: "Search",
      date: "2026-03-31",
      total_spend: 200.5,
      ...media(20, 2000, 0),
    },
    // The day after the window.
    { ...brand, ad_id: "G1", ad_name: "Search", date: "2026-04-01", total_spend: 77, ...media(7, 70, 7) },
    // Same ad id as the Meta ad, on another platform: its own row.
    { ...brand, ad_id: "A1", ad_name: "Google A1", date: "2026-03-20", total_spend: 10, ...media(1, 2, 3) },
    // Ties A2 on spend: platform breaks the tie (meta before tiktok). No campaign id.
    {
      platform: "tiktok",
      ad_id: "T1",
      ad_name: "Tok",
      date: "2026-03-02",
      total_spend: 80,
      ...media(1, 10, 5),
    },
    // A spend row of 0 in the window: the ad appears with zeros.
    {
      platform: "meta",
      ad_id: "A3",
      ad_name: "Ad Three",
      campaign_id: "C2",
      campaign_name: "Camp Two",
      date: "2026-03-15",
      total_spend: 0,
    },
    // Only spend before the window: the ad does not appear.
    { ...meta, ad_id: "A4", ad_name: "Ad Four", date: "2026-02-01", total_spend: 10 },
  ],
};

const spendRow = (r: Record<string, unknown>) => ({
  ad_id: r.ad_id,
  ad_name: r.ad_name,
  campaign_name: r.campaign_name ?? null,
  campaign_id: r.campaign_id ?? null,
  adset_name: r.adset_name ?? null,
  adset_id: r.adset_id ?? null,
  platform: r.platform,
  total_spend: r.total_spend,
  total_clicks: r.total_clicks,
  total_impressions: r.total_impressions,
  total_reach: r.total_reach,
});

const march = "from=2026-03-01&to=2026-03-31";

describe("GET /ads/spend", () => {
  test("one row per ad and platform with spend in the window, by spend desc", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, spend);
    const key = await account.key(["read:ads"]);
    const r = await env.get(key, `/ads/spend?${march}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      spendRow({ ...brand, ad_id: "G1", ad_name: "Search", total_spend: 200.5, ...media(20, 2000, 0) }),
      // 100 + 50.25 on 5 and 6 March; the 28 February row is outside.
      spendRow({
        ...meta,
        ad_id: "A1",
        ad_name: "Ad One",
        adset_id: "S1",
        adset_name: "Set One",
        total_spend: 150.25,
        ...media(15, 1500, 1100),
      }),
      spendRow({
        ...meta,
        ad_id: "A2",
        ad_name: "Ad Two",
        adset_id: "S2",
        adset_name: "Set Two",
        total_spend: 80,
        ...media(8, 700, 600),
      }),
      spendRow({ platform: "tiktok", ad_id: "T1", ad_name: "Tok", total_spend: 80, ...media(1, 10, 5) }),
      spendRow({ ...brand, ad_id: "A1", ad_name: "Google A1", total_spend: 10, ...media(1, 2, 3) }),
      spendRow({
        platform: "meta",
        ad_id: "A3",
        ad_name: "Ad Three",
        campaign_id: "C2",
        campaign_name: "Camp Two",
        total_spend: 0,
        ...media(0, 0, 0),
      }),
    ]);
  });

  test("a window without spend: an empty array; no parameters: the last 30 days", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, spend);
    const key = await account.key(["read:ads"]);
    assert.deepEqual((await env.get(key, "/ads/spend?from=2025-01-01&to=2025-01-31")).body, { data: [] });
    // 2 → 31 March: T1's 2 March row is in, nothing else changes.
    const r = await env.get(key, "/ads/spend");
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.data.map((x: { platform: string; ad_id: string }) => `${x.platform}:${x.ad_id}`),
      ["google:G1", "meta:A1", "meta:A2", "tiktok:T1", "google:A1", "meta:A3"],
    );
  });

  test("malformed dates: 400 naming the parameter", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:ads"]);
    assert.deepEqual(await env.get(key, "/ads/spend?to=2026-02-30"), {
      status: 400,
      body: { error: "to: is not a calendar date" },
    });
    assert.deepEqual(await env.get(key, "/ads/campaigns?from=yesterday"), {
      status: 400,
      body: { error: "from: must be a date YYYY-MM-DD" },
    });
  });
});

describe("GET /ads/campaigns", () => {
  test("one row per campaign and platform, by spend desc", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, spend);
    const key = await account.key(["read:ads"]);
    const r = await env.get(key, `/ads/campaigns?${march}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, [
      // A1 150.25 + A2 80; ad sets S1 and S2.
      {
        campaign_id: "C1",
        campaign_name: "Camp One",
        platform: "meta",
        total_spend: 230.25,
        total_clicks: 23,
        total_impressions: 2200,
        total_reach: 1700,
        nb_ads: 2,
        nb_adsets: 2,
      },
      // G1 200.5 + Google's A1 10; neither has an ad set.
      {
        campaign_id: "GC",
        campaign_name: "Brand",
        platform: "google",
        total_spend: 210.5,
        total_clicks: 21,
        total_impressions: 2002,
        total_reach: 3,
        nb_ads: 2,
        nb_adsets: 0,
      },
      {
        campaign_id: null,
        campaign_name: null,
        platform: "tiktok",
        total_spend: 80,
        total_clicks: 1,
        total_impressions: 10,
        total_reach: 5,
        nb_ads: 1,
        nb_adsets: 0,
      },
      {
        campaign_id: "C2",
        campaign_name: "Camp Two",
        platform: "meta",
        total_spend: 0,
        total_clicks: 0,
        total_impressions: 0,
        total_reach: 0,
        nb_ads: 1,
        nb_adsets: 0,
      },
    ]);
  });

  test("invariant: Σ campaigns = Σ ads = dashboard spend, over several windows", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, spend);
    const key = await account.key(["read:ads", "read:dashboard"]);
    const sum = (xs: { total_spend: number }[]) =>
      Math.round(xs.reduce((s, x) => s + x.total_spend, 0) * 100) / 100;
    for (const window of [march, "from=2026-02-01&to=2026-04-30", "from=2026-03-06&to=2026-03-10", ""]) {
      const ads = (await env.get(key, `/ads/spend?${window}`)).body.data;
      const campaigns = (await env.get(key, `/ads/campaigns?${window}`)).body.data;
      const kpis = (await env.get(key, `/dashboard/kpis?${window}`)).body.data;
      assert.equal(sum(campaigns), sum(ads), window);
      assert.equal(sum(ads), kpis.spend, window);
    }
    // And the March figure by hand: 200.5 + 150.25 + 80 + 80 + 10 + 0.
    assert.equal(sum((await env.get(key, `/ads/spend?${march}`)).body.data), 520.75);
  });
});

const R1 = "00000000-0000-4000-8000-000000000001";
const R2 = "00000000-0000-4000-8000-000000000002";
const R_BIG = "00000000-0000-4000-8000-000000000003";
const R_OTHER = "00000000-0000-4000-8000-000000000009";

async function insertRuns(
  accountId: string,
  ruleId: string,
  runs: { at: string; status: string; dry: boolean }[],
) {
  await env.db.tenant(accountId, async (tx) => {
    for (const [i, run] of runs.entries()) {
      await tx.execute(sql`
        insert into ad_rule_runs (account_id, id, rule_id, ran_at, dry_run, status, actions, summary)
        values (${accountId}, gen_random_uuid(), ${ruleId}, ${run.at}::timestamptz, ${run.dry}, ${run.status},
                ${JSON.stringify([{ action: "pause", ad_id: `A${i}` }])}::jsonb, ${`run ${i}`})`);
    }
  });
}

describe("GET /ads/rules and /ads/rules/runs", () => {
  test("rules with their last run; runs newest first; other accounts' rules give nothing", async () => {
    const account = await seedAccount(env.db);
    const other = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      rules: [
        {
          id: R1,
          label: "Pause losers",
          rule_type: "pause_losers",
          platform: "meta",
          campaign_id: "C1",
          campaign_name: "Camp One",
          enabled: true,
          dry_run: false,
          params: { max_spend_per_lead: 40 },
        },
        { id: R2, label: "Scale", rule_type: "scale_winners" },
      ],
    });
    await loadFixture(env.db, other.accountId, { rules: [{ id: R_OTHER, label: "Theirs", rule_type: "x" }] });
    await insertRuns(account.accountId, R1, [
      { at: "2026-03-28T06:00:00Z", status: "ok", dry: true },
      { at: "2026-03-30T06:00:00Z", status: "error", dry: false },
      { at: "2026-03-29T06:00:00Z", status: "ok", dry: false },
    ]);
    await insertRuns(other.accountId, R_OTHER, [{ at: "2026-03-30T06:00:00Z", status: "ok", dry: true }]);
    const key = await account.key(["read:ads"]);

    const rules = await env.get(key, "/ads/rules");
    assert.equal(rules.status, 200);
    for (const rule of rules.body.data) {
      assert.match(rule.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      delete rule.created_at;
      delete rule.updated_at;
    }
    assert.deepEqual(rules.body.data, [
      {
        id: R1,
        label: "Pause losers",
        rule_type: "pause_losers",
        platform: "meta",
        campaign_id: "C1",
        campaign_name: "Camp One",
        enabled: true,
        dry_run: false,
        params: { max_spend_per_lead: 40 },
        // The latest of its three runs, whatever the order they were written in.
        last_run_at: "2026-03-30T06:00:00.000Z",
        last_run_status: "error",
        last_run_dry_run: false,
      },
      {
        id: R2,
        label: "Scale",
        rule_type: "scale_winners",
        platform: null,
        campaign_id: null,
        campaign_name: null,
        enabled: true, // absent flags: enabled, and dry run (the safe default)
        dry_run: true,
        params: {},
        last_run_at: null,
        last_run_status: null,
        last_run_dry_run: null,
      },
    ]);

    const runs = await env.get(key, `/ads/rules/runs?rule_id=${R1}`);
    assert.equal(runs.status, 200);
    assert.deepEqual(
      runs.body.data.map((r: Record<string, unknown>) => [
        r.rule_id,
        r.ran_at,
        r.status,
        r.dry_run,
        r.summary,
      ]),
      [
        [R1, "2026-03-30T06:00:00.000Z", "error", false, "run 1"],
        [R1, "2026-03-29T06:00:00.000Z", "ok", false, "run 2"],
        [R1, "2026-03-28T06:00:00.000Z", "ok", true, "run 0"],
      ],
    );
    assert.deepEqual(runs.body.data[0].actions, [{ action: "pause", ad_id: "A1" }]);
    assert.equal((await env.get(key, `/ads/rules/runs?rule_id=${R1}&limit=2`)).body.data.length, 2);
    // No rule_id, a rule of another account, an unknown rule: all the same empty array.
    for (const url of [
      "/ads/rules/runs",
      `/ads/rules/runs?rule_id=${R_OTHER}`,
      `/ads/rules/runs?rule_id=${R2}`,
    ]) {
      assert.deepEqual(await env.get(key, url), { status: 200, body: { data: [] } }, url);
    }
  });

  test("limit: default 30, clamped to 100; malformed parameters → 400", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, { rules: [{ id: R_BIG, label: "Busy", rule_type: "x" }] });
    await env.db.tenant(account.accountId, (tx) =>
      tx.execute(sql`
        insert into ad_rule_runs (account_id, id, rule_id, ran_at, dry_run, status)
        select ${account.accountId}, gen_random_uuid(), ${R_BIG}, '2026-01-01T00:00:00Z'::timestamptz + n * interval '1 hour', true, 'ok'
        from generate_series(1, 120) n`),
    );
    const key = await account.key(["read:ads"]);
    const runs = (url: string) => env.get(key, url).then((r) => r.body.data.length);
    assert.equal(await runs(`/ads/rules/runs?rule_id=${R_BIG}`), 30);
    assert.equal(await runs(`/ads/rules/runs?rule_id=${R_BIG}&limit=500`), 100);
    assert.deepEqual(await env.get(key, `/ads/rules/runs?rule_id=${R_BIG}&limit=0`), {
      status: 400,
      body: { error: "limit: must be at least 1" },
    });
    assert.deepEqual(await env.get(key, `/ads/rules/runs?rule_id=${R_BIG}&limit=ten`), {
      status: 400,
      body: { error: "limit: must be an integer" },
    });
    assert.deepEqual(await env.get(key, "/ads/rules/runs?rule_id=42"), {
      status: 400,
      body: { error: "rule_id: must be a UUID" },
    });
  });
});
