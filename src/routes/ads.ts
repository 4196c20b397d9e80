import { z } from "zod";
import { adsCampaigns } from "../queries/ads-campaigns.ts";
import { adsRuleRuns } from "../queries/ads-rule-runs.ts";
import { adsRules } from "../queries/ads-rules.ts";
import { adsSpend } from "../queries/ads-spend.ts";
import { limitParam, reportWindow, windowQuery } from "../reports/window.ts";
import { deleteRule, setRuleDryRun, setRuleEnabled } from "../rules/ad-rule-service.ts";
import { defineRoute } from "./route-def.ts";

const ruleId = z.guid({ error: "must be a UUID" });

export const adsRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/ads/spend",
    scope: "read:ads",
    input: windowQuery({}),
    description:
      "Spend per ad and platform over a window (from/to, default the last 30 days): ad, ad set and campaign ids and names, total spend, clicks, impressions and reach; only ads with spend in the window, by spend descending.",
    handler: ({ tx, tenant, input, now }) =>
      adsSpend(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/ads/campaigns",
    scope: "read:ads",
    input: windowQuery({}),
    description:
      "Spend per campaign and platform over a window (from/to, default the last 30 days): total spend, clicks, impressions, reach, and the number of ads and ad sets with spend; by spend descending.",
    handler: ({ tx, tenant, input, now }) =>
      adsCampaigns(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/ads/rules",
    scope: "read:ads",
    input: z.object({}),
    description:
      "The account's automated ad rules: label, type, platform and campaign, enabled and dry-run flags, parameters, and the last run (time, status).",
    handler: ({ tx, tenant }) => adsRules(tx, tenant.accountId),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/ads/rules/runs",
    scope: "read:ads",
    input: z.object({
      rule_id: z.guid({ error: "must be a UUID" }).optional(),
      limit: limitParam(30, 100),
    }),
    description:
      "The latest runs of one ad rule (rule_id), newest first (limit, default 30, max 100): time, dry run, status, actions and summary. Without rule_id, or for a rule that is not the account's, an empty array.",
    handler: async ({ tx, tenant, input }) =>
      input.rule_id === undefined
        ? []
        : adsRuleRuns(tx, tenant.accountId, { ruleId: input.rule_id, limit: input.limit }),
  }),
  defineRoute({
    methods: ["POST", "PUT"],
    path: "/ads/rules/enable",
    scope: "write:ads",
    input: z.object({ rule_id: ruleId, enabled: z.boolean().nullish() }),
    required: { field: "rule_id", error: "missing rule_id" },
    description:
      "Enables or disables an ad rule: `rule_id`, and `enabled` (true unless false is sent). A disabled rule is not evaluated. Answers the rule's flags. Another account's rule → 403 forbidden; no such rule → 404 not_found.",
    handler: ({ tx, tenant, input }) => setRuleEnabled(tx, tenant, input.rule_id, input.enabled !== false),
  }),
  defineRoute({
    methods: ["POST", "PUT"],
    path: "/ads/rules/dry-run",
    scope: "write:ads",
    input: z.object({ rule_id: ruleId, dry_run: z.boolean().nullish() }),
    required: { field: "rule_id", error: "missing rule_id" },
    description:
      "Switches an ad rule between dry run and armed: `rule_id`, and `dry_run` (true unless false is sent). A dry run records what the rule would do without contacting the ad network; `dry_run` false arms it to pause ads and change budgets for real (paid plans only: 403 plan_free_no_autopilot). Answers the rule's flags.",
    handler: ({ tx, tenant, input }) => setRuleDryRun(tx, tenant, input.rule_id, input.dry_run !== false),
  }),
  defineRoute({
    methods: ["POST"],
    path: "/ads/rules/delete",
    scope: "write:ads",
    input: z.object({ rule_id: ruleId }),
    required: { field: "rule_id", error: "missing rule_id" },
    description:
      "Deletes an ad rule and its run history, for good: `rule_id`. Another account's rule → 403 forbidden; no such rule → 404 not_found.",
    handler: ({ tx, tenant, input }) => deleteRule(tx, tenant, input.rule_id),
  }),
];
