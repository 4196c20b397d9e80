import type { Database } from "../db/client.ts";
import type { Metrics } from "../http/metrics.ts";
import { attributionRows } from "../queries/attribution-rows.ts";
import { enabledRules } from "../queries/enabled-rules.ts";
import { insertRuleRun } from "../queries/insert-rule-run.ts";
import { ruleAccounts } from "../queries/rule-accounts.ts";
import { ruleTenant } from "../queries/rule-tenant.ts";
import { dateIn, reportWindow, startOfDay } from "../reports/window.ts";
import type { AdNetwork } from "./ad-network.ts";
import {
  type AdFigures,
  actionTarget,
  evaluateRule,
  inScope,
  type ProposedAction,
  ruleLookbackDays,
} from "./evaluate-rule.ts";

export interface RuleEngineDeps {
  db: Database;
  network: AdNetwork;
  clock: () => Date;
  /** Counts each recorded run (the server's; the CLI's own process has none). */
  metrics?: Metrics;
}

/** One action of a run as recorded: proposed (dry run), done, failed (retried next time), skipped. */
export type RecordedAction = ProposedAction & {
  target: string;
  status: "proposed" | "done" | "failed" | "already_done";
  error?: string;
  /** raise_budget, once done: the daily budget before and after. */
  budget_from?: number;
  budget_to?: number;
};

export interface RunOutcome {
  account_id: string;
  rule_id: string;
  run_id: string;
  dry_run: boolean;
  status: "ok" | "error";
  actions: RecordedAction[];
  summary: string;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Evaluates enabled rules — every account's, or one account's — with the reports' own figures
 * (GET /attribution over each rule's lookback window, the account's timezone), and records a run
 * for each. A dry run records what it would do and contacts no network. An armed rule acts through
 * the AdNetwork outside any transaction; a target it already acted on today is not acted on again,
 * and a failed action is recorded as such and tried again at the next evaluation.
 */
export async function runRules(
  deps: RuleEngineDeps,
  options: { accountId?: string; ruleId?: string } = {},
): Promise<RunOutcome[]> {
  const accounts = options.accountId
    ? [options.accountId]
    : await deps.db.admin(null, (tx) => ruleAccounts(tx));
  const outcomes: RunOutcome[] = [];
  for (const accountId of accounts) {
    const recorded = await runAccount(deps, accountId, options.ruleId);
    for (const outcome of recorded) deps.metrics?.ruleRun(outcome);
    outcomes.push(...recorded);
  }
  return outcomes;
}

async function runAccount(deps: RuleEngineDeps, accountId: string, ruleId?: string): Promise<RunOutcome[]> {
  const now = deps.clock();
  // Read everything first, in one transaction: the network calls below hold none open.
  const plans = await deps.db.tenant(accountId, async (tx) => {
    const tenant = await ruleTenant(tx, accountId);
    if (!tenant) return [];
    const since = startOfDay(dateIn(tenant.timezone, now), tenant.timezone);
    const rules = await enabledRules(tx, accountId, { since, ruleId });
    const figuresByDays = new Map<number, AdFigures[]>();
    const planned = [];
    for (const rule of rules) {
      const days = ruleLookbackDays(rule);
      let figures: AdFigures[] = [];
      if (days !== null) {
        const cached = figuresByDays.get(days);
        figures = cached ?? (await adFigures(tx, accountId, reportWindow({}, tenant, now, days)));
        figuresByDays.set(days, figures);
      }
      let proposed: ProposedAction[] = [];
      let failure: string | null = null;
      try {
        proposed = evaluateRule(rule, figures);
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      // The free plan never acts for real, whatever the stored flag says.
      const dryRun = rule.dry_run || tenant.plan === "free";
      planned.push({ rule, figures, proposed, failure, dryRun, window: days });
    }
    return planned;
  });

  const outcomes: RunOutcome[] = [];
  for (const plan of plans) {
    const done = new Set(plan.rule.done_today);
    const seen = new Set<string>();
    const actions: RecordedAction[] = [];
    for (const action of plan.proposed) {
      const target = actionTarget(action);
      if (seen.has(target)) continue; // one evaluation acts once per target
      seen.add(target);
      if (plan.dryRun || action.action === "flag_ad") {
        actions.push({ ...action, target, status: plan.dryRun ? "proposed" : "done" });
      } else if (done.has(target)) {
        actions.push({ ...action, target, status: "already_done" });
      } else {
        actions.push(await act(deps.network, accountId, action, target));
      }
    }
    const failed = actions.filter((a) => a.status === "failed").length;
    const status = plan.failure || failed > 0 ? "error" : "ok";
    const summary = plan.failure ?? summarize(actions, plan.dryRun);
    const metrics = {
      lookback_days: plan.window,
      ads: plan.figures.filter((a) => inScope(plan.rule, a)),
    };
    const runId = await deps.db.tenant(accountId, (tx) =>
      insertRuleRun(tx, accountId, {
        ruleId: plan.rule.id,
        ranAt: now,
        dryRun: plan.dryRun,
        status,
        actions,
        summary,
        metrics,
      }),
    );
    outcomes.push({
      account_id: accountId,
      rule_id: plan.rule.id,
      run_id: runId,
      dry_run: plan.dryRun,
      status,
      actions,
      summary,
    });
  }
  return outcomes;
}

function summarize(actions: readonly RecordedAction[], dryRun: boolean): string {
  if (actions.length === 0) return "no ad matched the conditions";
  if (dryRun) return `would act on ${actions.length} target${actions.length > 1 ? "s" : ""}`;
  const count = (status: RecordedAction["status"]) => actions.filter((a) => a.status === status).length;
  return [
    `${count("done")} done`,
    count("failed") > 0 ? `${count("failed")} failed (retried next run)` : "",
    count("already_done") > 0 ? `${count("already_done")} already done today` : "",
  ]
    .filter(Boolean)
    .join(", ");
}

async function act(
  network: AdNetwork,
  accountId: string,
  action: ProposedAction,
  target: string,
): Promise<RecordedAction> {
  try {
    if (action.action === "pause_ad") {
      await network.pauseAd(accountId, { platform: action.platform, id: action.ad_id });
      return { ...action, target, status: "done" };
    }
    if (action.action === "raise_budget") {
      const campaign = { platform: action.platform, id: action.campaign_id };
      const current = await network.campaignDailyBudget(accountId, campaign);
      const raised = round2(current * (1 + action.by_pct / 100));
      const next = action.max_daily_budget === null ? raised : Math.min(raised, action.max_daily_budget);
      if (next <= current)
        return { ...action, target, status: "done", budget_from: current, budget_to: current };
      await network.setCampaignDailyBudget(accountId, campaign, next);
      return { ...action, target, status: "done", budget_from: current, budget_to: next };
    }
    return { ...action, target, status: "done" };
  } catch (err) {
    return { ...action, target, status: "failed", error: err instanceof Error ? err.message : String(err) };
  }
}

async function adFigures(
  tx: Parameters<typeof attributionRows>[0],
  accountId: string,
  window: ReturnType<typeof reportWindow>,
): Promise<AdFigures[]> {
  const found = await attributionRows(tx, accountId, { window });
  return found
    .filter((r) => r.out_ad_id !== null)
    .map((r) => ({
      platform: r.out_platform,
      ad_id: r.out_ad_id,
      ad_name: r.out_ad_name,
      campaign_id: r.out_campaign_id,
      campaign_name: r.out_campaign_name,
      spend: r.out_total_spend,
      clicks: r.out_total_clicks,
      impressions: r.out_total_impressions,
      leads: r.out_leads,
      sales: r.out_sales,
      revenue: r.out_revenue,
      net_revenue: r.out_net_revenue,
    }));
}
