import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { type FakeAdNetwork, startFakeAdNetwork } from "../../src/rules/fake-ad-network.ts";
import { createGraphApiNetwork } from "../../src/rules/graph-api-network.ts";
import { runRules } from "../../src/rules/rule-engine.ts";
import { bearer, seedAccount, seedAdRule, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";

let now = new Date("2026-03-31T12:00:00Z");
const clock = () => now;
/** The next evaluation, a minute on (same day). */
const aMinuteLater = () => {
  now = new Date(now.getTime() + 60_000);
};
const env = useTestApp({ clock });

const AD_HIGH = "120000000000000001"; // 300 spent, 2 leads: CPL 150
const AD_LOW = "120000000000000002"; // 100 spent, 4 leads: CPL 25
const CAMPAIGN = "120000000000000100";

const fixture = {
  spend: [
    {
      platform: "meta",
      ad_id: AD_HIGH,
      ad_name: "High",
      campaign_id: CAMPAIGN,
      campaign_name: "Spring",
      date: "2026-03-29",
      total_spend: 300,
    },
    {
      platform: "meta",
      ad_id: AD_LOW,
      ad_name: "Low",
      campaign_id: CAMPAIGN,
      campaign_name: "Spring",
      date: "2026-03-29",
      total_spend: 100,
    },
  ],
  events: [
    ...[1, 2].map((i) => ({
      id: `h${i}`,
      event_type: "lead",
      event_datetime: at("2026-03-30"),
      contact_email: `h${i}@x.test`,
      utm_ad_id: AD_HIGH,
    })),
    ...[1, 2, 3, 4].map((i) => ({
      id: `l${i}`,
      event_type: "lead",
      event_datetime: at("2026-03-30"),
      contact_email: `l${i}@x.test`,
      utm_ad_id: AD_LOW,
    })),
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-30", "15:00:00"),
      contact_email: "l1@x.test",
      amount: 2000,
      utm_ad_id: AD_LOW,
    },
  ],
};

let network: FakeAdNetwork;
before(async () => {
  network = await startFakeAdNetwork({ budgets: { [CAMPAIGN]: 10000 } });
});
after(() => network.close());

const deps = () => ({
  db: env.db,
  network: createGraphApiNetwork({ baseUrl: network.url, tokenFor: async () => "test-token" }),
  clock,
});

async function accountWithRule(
  ruleType: string,
  params: Record<string, unknown>,
  options: { armed?: boolean; plan?: "free" } = {},
) {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, fixture);
  const rule = await seedAdRule(env.db, account.accountId, { ruleType, params, campaignId: CAMPAIGN });
  if (options.armed) {
    await env.db.admin(account.accountId, (tx) =>
      tx.execute(sql`update ad_rules set dry_run = false where id = ${rule}`),
    );
  }
  if (options.plan) await account.setPlan(options.plan);
  return { account, rule };
}

const runsOf = (accountId: string, rule: string) =>
  env.db.admin(accountId, (tx) =>
    rows<{
      dry_run: boolean;
      status: string;
      actions: { target: string; status: string }[];
      metrics: { lookback_days: number; ads: { ad_id: string; spend: number; leads: number }[] };
    }>(
      tx,
      sql`select dry_run, status, actions, metrics from ad_rule_runs where rule_id = ${rule} order by ran_at, id`,
    ),
  );

describe("the rule engine", () => {
  test("a dry run records what it would do, with the figures it saw, and never calls the network", async () => {
    const { account, rule } = await accountWithRule("pause_high_cpl", { max_cpl: 60 });
    const before = network.calls.length;
    const [outcome] = await runRules(deps(), { accountId: account.accountId });
    assert.equal(network.calls.length, before, "no network call");
    assert.deepEqual(
      outcome?.actions.map((a) => [a.target, a.status]),
      [[`pause_ad:meta:${AD_HIGH}`, "proposed"]],
    );
    const [run] = await runsOf(account.accountId, rule);
    assert.equal(run?.dry_run, true);
    assert.equal(run?.status, "ok");
    assert.equal(run?.metrics.lookback_days, 7);
    assert.deepEqual(run?.metrics.ads.map((a) => [a.ad_id, a.spend, a.leads]).sort(), [
      [AD_HIGH, 300, 2],
      [AD_LOW, 100, 4],
    ]);
    // And through the API: the run is the rule's latest.
    const key = await account.key(["read:ads"]);
    const runs = await env.app.inject({
      url: `/api/v1/ads/rules/runs?rule_id=${rule}`,
      headers: bearer(key),
    });
    assert.equal(runs.json().data[0].summary, "would act on 1 target");
  });

  test("armed: the network is called exactly once per target; a second evaluation the same day does not act again", async () => {
    const { account, rule } = await accountWithRule("pause_high_cpl", { max_cpl: 60 }, { armed: true });
    const before = network.calls.length;
    await runRules(deps(), { accountId: account.accountId });
    const made = network.calls.slice(before);
    assert.deepEqual(
      made.map((c) => [c.method, c.path, c.fields, c.token]),
      [["POST", `/v21.0/${AD_HIGH}`, { status: "PAUSED" }, "test-token"]],
    );
    assert.equal(network.adStatus.get(AD_HIGH), "PAUSED");
    aMinuteLater();
    await runRules(deps(), { accountId: account.accountId });
    assert.equal(network.calls.length, before + 1, "not twice");
    const runs = await runsOf(account.accountId, rule);
    assert.deepEqual(
      runs.map((r) => r.actions.map((a) => a.status)),
      [["done"], ["already_done"]],
    );
  });

  test("a network failure is recorded and retried at the next evaluation", async () => {
    const { account, rule } = await accountWithRule("pause_high_cpl", { max_cpl: 60 }, { armed: true });
    network.failNext(1);
    const [first] = await runRules(deps(), { accountId: account.accountId });
    assert.equal(first?.status, "error");
    assert.match(first?.actions[0]?.error ?? "", /^Meta API 500: /);
    assert.match(first?.summary ?? "", /1 failed \(retried next run\)/);
    aMinuteLater();
    const [second] = await runRules(deps(), { accountId: account.accountId });
    assert.equal(second?.status, "ok");
    const runs = await runsOf(account.accountId, rule);
    assert.deepEqual(
      runs.map((r) => [r.status, r.actions.map((a) => a.status)]),
      [
        ["error", ["failed"]],
        ["ok", ["done"]],
      ],
    );
  });

  test("scale_winners raises the campaign's daily budget once, capped", async () => {
    const { account } = await accountWithRule(
      "scale_winners",
      { min_roas: 4, budget_step_pct: 20, max_daily_budget: 110 },
      { armed: true },
    );
    network.budgets.set(CAMPAIGN, 10000); // 100.00
    const [outcome] = await runRules(deps(), { accountId: account.accountId });
    // ROAS 2000 / 400 = 5: +20 % of 100 = 120, capped at 110.
    assert.deepEqual(
      outcome?.actions.map((a) => [a.target, a.status, a.budget_from, a.budget_to]),
      [[`raise_budget:meta:${CAMPAIGN}`, "done", 100, 110]],
    );
    assert.equal(network.budgets.get(CAMPAIGN), 11000);
    await runRules(deps(), { accountId: account.accountId });
    assert.equal(network.budgets.get(CAMPAIGN), 11000, "once a day");
  });

  test("the free plan never acts for real, whatever the stored flag", async () => {
    const { account } = await accountWithRule(
      "pause_high_cpl",
      { max_cpl: 60 },
      { armed: true, plan: "free" },
    );
    const before = network.calls.length;
    const [outcome] = await runRules(deps(), { accountId: account.accountId });
    assert.equal(outcome?.dry_run, true);
    assert.equal(network.calls.length, before);
  });

  test("without an account: every account with an enabled rule; disabled rules are not evaluated", async () => {
    const a = await accountWithRule("pause_no_result", { min_spend: 1 });
    const b = await accountWithRule("pause_high_cpl", { max_cpl: 60 });
    await env.db.admin(b.account.accountId, (tx) =>
      tx.execute(sql`update ad_rules set enabled = false where id = ${b.rule}`),
    );
    const outcomes = await runRules(deps());
    assert.ok(outcomes.some((o) => o.rule_id === a.rule));
    assert.ok(!outcomes.some((o) => o.account_id === b.account.accountId));
  });
});
