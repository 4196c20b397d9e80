import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AdFigures, evaluateRule, type RuleDefinition } from "../../src/rules/evaluate-rule.ts";

const ad = (id: string, figures: Partial<AdFigures>): AdFigures => ({
  platform: "meta",
  ad_id: id,
  ad_name: `Ad ${id}`,
  campaign_id: "C1",
  campaign_name: "Spring",
  spend: 0,
  clicks: 0,
  impressions: 0,
  leads: 0,
  sales: 0,
  revenue: 0,
  net_revenue: 0,
  ...figures,
});

const rule = (rule_type: string, params: unknown, scope: Partial<RuleDefinition> = {}): RuleDefinition => ({
  id: "r1",
  rule_type,
  platform: null,
  campaign_id: null,
  params,
  ...scope,
});

const targets = (r: RuleDefinition, ads: AdFigures[]) =>
  evaluateRule(r, ads).map((a) => [a.action, "ad_id" in a ? a.ad_id : a.campaign_id, a.reason]);

describe("rule evaluation on hand-built figures", () => {
  test("pause_high_cpl: cost per lead above the maximum; no lead counts as the spend itself", () => {
    const ads = [
      ad("1", { spend: 300, leads: 4 }), // 75 > 60
      ad("2", { spend: 240, leads: 4 }), // 60: not above
      ad("3", { spend: 61, leads: 0 }), // 61 spent, no lead yet
      ad("4", { spend: 59, leads: 0 }), // under the maximum so far
      ad("5", { spend: 80, leads: 1 }), // 80 > 60, under a min_spend of 100
    ];
    assert.deepEqual(targets(rule("pause_high_cpl", { max_cpl: 60 }), ads), [
      ["pause_ad", "1", "cost per lead 75 > 60 (300 spent, 4 leads)"],
      ["pause_ad", "3", "cost per lead 61 > 60 (61 spent, 0 leads)"],
      ["pause_ad", "5", "cost per lead 80 > 60 (80 spent, 1 leads)"],
    ]);
    assert.deepEqual(
      targets(rule("pause_high_cpl", { max_cpl: 60, min_spend: 100 }), ads).map((t) => t[1]),
      ["1"],
      "min_spend 100 leaves out ads 3 and 5",
    );
  });

  test("pause_high_cps: per counted sale", () => {
    const ads = [ad("1", { spend: 1000, sales: 2 }), ad("2", { spend: 900, sales: 3 })];
    assert.deepEqual(targets(rule("pause_high_cps", { max_cps: 400 }), ads), [
      ["pause_ad", "1", "cost per sale 500 > 400 (1000 spent, 2 sales)"],
    ]);
  });

  test("pause_no_result: spent at least min_spend without a lead (or a sale)", () => {
    const ads = [
      ad("1", { spend: 150, leads: 0, sales: 0 }),
      ad("2", { spend: 150, leads: 1, sales: 0 }),
      ad("3", { spend: 149, leads: 0 }),
    ];
    assert.deepEqual(targets(rule("pause_no_result", { min_spend: 150 }), ads), [
      ["pause_ad", "1", "150 spent without a lead"],
    ]);
    assert.deepEqual(
      targets(rule("pause_no_result", { min_spend: 150, result: "sale" }), ads).map((t) => t[1]),
      ["1", "2"],
    );
  });

  test("flag_low_roi: net ROI = (net revenue − spend) / spend below the minimum; flags, never pauses", () => {
    const ads = [
      ad("1", { spend: 1000, revenue: 900, net_revenue: 700 }), // −0.3
      ad("2", { spend: 1000, revenue: 900, net_revenue: 900 }), // −0.1
      ad("3", { spend: 0, net_revenue: 100 }),
    ];
    assert.deepEqual(targets(rule("flag_low_roi", { min_roi: -0.2 }), ads), [
      ["flag_ad", "1", "net ROI -0.3 < -0.2"],
    ]);
  });

  test("ctr_floor: clicks / impressions under the floor once enough impressions", () => {
    const ads = [
      ad("1", { impressions: 10000, clicks: 50 }), // 0.5 %
      ad("2", { impressions: 10000, clicks: 90 }), // 0.9 %
      ad("3", { impressions: 999, clicks: 0 }),
    ];
    assert.deepEqual(targets(rule("ctr_floor", { min_ctr: 0.008 }), ads), [
      ["pause_ad", "1", "CTR 0.50 % < 0.80 % over 10000 impressions"],
    ]);
  });

  test("scale_winners: per campaign, ROAS = revenue / spend over its ads; the cap travels with the action", () => {
    const ads = [
      ad("1", { campaign_id: "C1", spend: 100, revenue: 250 }),
      ad("2", { campaign_id: "C1", spend: 100, revenue: 400 }), // C1: 650 / 200 = 3.25
      ad("3", { campaign_id: "C2", campaign_name: "Retarget", spend: 300, revenue: 600 }), // 2
    ];
    const proposed = evaluateRule(
      rule("scale_winners", { min_roas: 3, budget_step_pct: 20, max_daily_budget: 500 }),
      ads,
    );
    assert.deepEqual(proposed, [
      {
        action: "raise_budget",
        platform: "meta",
        campaign_id: "C1",
        campaign_name: "Spring",
        by_pct: 20,
        max_daily_budget: 500,
        reason: "ROAS 3.25 ≥ 3 (650 on 200)",
      },
    ]);
  });

  test("scope: only the rule's platform and campaign", () => {
    const ads = [
      ad("1", { spend: 100 }),
      ad("2", { spend: 100, platform: "tiktok" }),
      ad("3", { spend: 100, campaign_id: "C2" }),
    ];
    const r = rule("pause_no_result", { min_spend: 50 }, { platform: "meta", campaign_id: "C1" });
    assert.deepEqual(
      targets(r, ads).map((t) => t[1]),
      ["1"],
    );
  });

  test("an unknown type or invalid parameters throw, naming the problem", () => {
    assert.throws(
      () => evaluateRule(rule("daily_spend_cap", {}), []),
      /unsupported rule type daily_spend_cap/,
    );
    assert.throws(
      () => evaluateRule(rule("pause_high_cpl", { max_cpl: "sixty" }), []),
      /invalid params: max_cpl/,
    );
    assert.throws(
      () => evaluateRule(rule("scale_winners", { min_roas: 2, budget_step_pct: 0 }), []),
      /budget_step_pct/,
    );
  });
});
