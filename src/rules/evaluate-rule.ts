import { z } from "zod";

/** One ad's figures over a rule's lookback window, as the reports compute them (GET /attribution). */
export interface AdFigures {
  platform: string;
  ad_id: string;
  ad_name: string | null;
  campaign_id: string | null;
  campaign_name: string | null;
  spend: number;
  clicks: number;
  impressions: number;
  leads: number;
  sales: number;
  revenue: number;
  net_revenue: number;
}

const lookback = z.number().int().min(1).max(90).default(7);
const money = z.number().finite().min(0);

/** The rule types the engine evaluates, with their parameters (docs/rules.md). */
export const RULE_PARAMS = {
  /** Pause an ad whose cost per lead over the window exceeds `max_cpl`. */
  pause_high_cpl: z.object({ max_cpl: money, min_spend: money.default(0), lookback_days: lookback }),
  /** Pause an ad whose cost per counted sale over the window exceeds `max_cps`. */
  pause_high_cps: z.object({ max_cps: money, min_spend: money.default(0), lookback_days: lookback }),
  /** Pause an ad that spent at least `min_spend` without a lead (or a sale) in the window. */
  pause_no_result: z.object({
    min_spend: money,
    result: z.enum(["lead", "sale"]).default("lead"),
    lookback_days: lookback,
  }),
  /** Pause an ad whose click-through rate is below `min_ctr` (0.008 = 0.8 %) after `min_impressions`. */
  ctr_floor: z.object({
    min_ctr: z.number().finite().min(0).max(1),
    min_impressions: z.number().int().min(1).default(1000),
    lookback_days: lookback,
  }),
  /** Flag (never pause) an ad whose net ROI over the window is below `min_roi` (−0.2 = −20 %). */
  flag_low_roi: z.object({
    min_roi: z.number().finite(),
    min_spend: money.default(0),
    lookback_days: lookback,
  }),
  /** Raise a campaign's daily budget by `budget_step_pct` when its ROAS reaches `min_roas`, up to `max_daily_budget`. */
  scale_winners: z.object({
    min_roas: money,
    budget_step_pct: z.number().finite().gt(0).max(100),
    max_daily_budget: money.optional(),
    min_spend: money.default(0),
    lookback_days: lookback,
  }),
} as const;

export type RuleType = keyof typeof RULE_PARAMS;

export interface RuleDefinition {
  id: string;
  rule_type: string;
  /** Only this platform's ads (null: every platform). */
  platform: string | null;
  /** Only this campaign's ads (null: every campaign). */
  campaign_id: string | null;
  params: unknown;
}

export type ProposedAction =
  | { action: "pause_ad"; platform: string; ad_id: string; ad_name: string | null; reason: string }
  | { action: "flag_ad"; platform: string; ad_id: string; ad_name: string | null; reason: string }
  | {
      action: "raise_budget";
      platform: string;
      campaign_id: string;
      campaign_name: string | null;
      by_pct: number;
      max_daily_budget: number | null;
      reason: string;
    };

/** The target an action acts on: one action per rule, kind and target per day. */
export const actionTarget = (a: ProposedAction) =>
  a.action === "raise_budget"
    ? `${a.action}:${a.platform}:${a.campaign_id}`
    : `${a.action}:${a.platform}:${a.ad_id}`;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Whether an ad is one the rule watches: its platform and campaign, when the rule names them. */
export function inScope(rule: Pick<RuleDefinition, "platform" | "campaign_id">, ad: AdFigures): boolean {
  return (
    (rule.platform === null || ad.platform === rule.platform) &&
    (rule.campaign_id === null || ad.campaign_id === rule.campaign_id)
  );
}

export function isRuleType(type: string): type is RuleType {
  return Object.hasOwn(RULE_PARAMS, type);
}

/** The lookback window of a rule (its `lookback_days`, default 7); null for an unknown type or bad params. */
export function ruleLookbackDays(rule: RuleDefinition): number | null {
  if (!isRuleType(rule.rule_type)) return null;
  const parsed = RULE_PARAMS[rule.rule_type].safeParse(rule.params ?? {});
  return parsed.success ? parsed.data.lookback_days : null;
}

/**
 * What a rule proposes given its ads' figures: a pure function, so each rule type is tested on
 * hand-built figures. Ads outside the rule's platform or campaign are ignored. Throws on an unknown
 * type or invalid parameters (the run records it).
 */
export function evaluateRule(rule: RuleDefinition, ads: readonly AdFigures[]): ProposedAction[] {
  if (!isRuleType(rule.rule_type)) throw new Error(`unsupported rule type ${rule.rule_type}`);
  const parsed = RULE_PARAMS[rule.rule_type].safeParse(rule.params ?? {});
  if (!parsed.success)
    throw new Error(
      `invalid params: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const scoped = ads.filter((a) => inScope(rule, a));
  const pause = (a: AdFigures, reason: string): ProposedAction => ({
    action: "pause_ad",
    platform: a.platform,
    ad_id: a.ad_id,
    ad_name: a.ad_name,
    reason,
  });

  switch (rule.rule_type) {
    case "pause_high_cpl":
    case "pause_high_cps": {
      const p = parsed.data as { max_cpl?: number; max_cps?: number; min_spend: number };
      const perLead = rule.rule_type === "pause_high_cpl";
      const max = (perLead ? p.max_cpl : p.max_cps) ?? 0;
      const label = perLead ? "cost per lead" : "cost per sale";
      return scoped.flatMap((a) => {
        const results = perLead ? a.leads : a.sales;
        if (a.spend <= 0 || a.spend < p.min_spend) return [];
        // Without a result, the spend itself is what one result has cost so far, at least.
        const cost = a.spend / Math.max(results, 1);
        if (cost <= max) return [];
        return [
          pause(
            a,
            `${label} ${round2(cost)} > ${max} (${round2(a.spend)} spent, ${results} ${perLead ? "leads" : "sales"})`,
          ),
        ];
      });
    }
    case "ctr_floor": {
      const p = parsed.data as { min_ctr: number; min_impressions: number };
      return scoped.flatMap((a) => {
        if (a.impressions < p.min_impressions) return [];
        const ctr = a.clicks / a.impressions;
        if (ctr >= p.min_ctr) return [];
        return [
          pause(
            a,
            `CTR ${(ctr * 100).toFixed(2)} % < ${(p.min_ctr * 100).toFixed(2)} % over ${a.impressions} impressions`,
          ),
        ];
      });
    }
    case "pause_no_result": {
      const p = parsed.data as { min_spend: number; result: "lead" | "sale" };
      return scoped.flatMap((a) => {
        const results = p.result === "lead" ? a.leads : a.sales;
        if (results > 0 || a.spend < p.min_spend || a.spend <= 0) return [];
        return [pause(a, `${round2(a.spend)} spent without a ${p.result}`)];
      });
    }
    case "flag_low_roi": {
      const p = parsed.data as { min_roi: number; min_spend: number };
      return scoped.flatMap((a): ProposedAction[] => {
        if (a.spend <= 0 || a.spend < p.min_spend) return [];
        const roi = (a.net_revenue - a.spend) / a.spend;
        if (roi >= p.min_roi) return [];
        return [
          {
            action: "flag_ad",
            platform: a.platform,
            ad_id: a.ad_id,
            ad_name: a.ad_name,
            reason: `net ROI ${round2(roi)} < ${p.min_roi}`,
          },
        ];
      });
    }
    case "scale_winners": {
      const p = parsed.data as {
        min_roas: number;
        budget_step_pct: number;
        max_daily_budget?: number;
        min_spend: number;
      };
      const campaigns = new Map<
        string,
        { platform: string; id: string; name: string | null; spend: number; revenue: number }
      >();
      for (const a of scoped) {
        if (a.campaign_id === null) continue;
        const key = `${a.platform}:${a.campaign_id}`;
        const c = campaigns.get(key) ?? {
          platform: a.platform,
          id: a.campaign_id,
          name: a.campaign_name,
          spend: 0,
          revenue: 0,
        };
        c.spend += a.spend;
        c.revenue += a.revenue;
        campaigns.set(key, c);
      }
      return [...campaigns.values()].flatMap((c): ProposedAction[] => {
        if (c.spend <= 0 || c.spend < p.min_spend) return [];
        const roas = c.revenue / c.spend;
        if (roas < p.min_roas) return [];
        return [
          {
            action: "raise_budget",
            platform: c.platform,
            campaign_id: c.id,
            campaign_name: c.name,
            by_pct: p.budget_step_pct,
            max_daily_budget: p.max_daily_budget ?? null,
            reason: `ROAS ${round2(roas)} ≥ ${p.min_roas} (${round2(c.revenue)} on ${round2(c.spend)})`,
          },
        ];
      });
    }
  }
}
