import { z } from "zod";
import { adsCampaigns } from "../queries/ads-campaigns.ts";
import { adsRuleRuns } from "../queries/ads-rule-runs.ts";
import { adsRules } from "../queries/ads-rules.ts";
import { adsSpend } from "../queries/ads-spend.ts";
import { limitParam, reportWindow, windowQuery } from "../reports/window.ts";
import { deleteRule, setRuleDryRun, setRuleEnabled } from "../rules/ad-rule-service.ts";
import { defineRoute } from "./route-def.ts";
import { count, instant, jsonObject, money, text } from "./shapes.ts";

const ruleId = z.guid({ error: "must be a UUID" });

/** Media counts are summed as float8: whole numbers, possibly beyond int32. */
const mediaCount = () => z.number();

/** What a write on a rule answers: its flags after the write. */
const ruleFlags = z.object({ rule_id: z.string(), enabled: z.boolean(), dry_run: z.boolean() });

export const adsRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/ads/spend",
    scope: "read:ads",
    input: windowQuery({}),
    output: z.array(
      z.object({
        ad_id: z.string(),
        ad_name: z.string(),
        campaign_name: text(),
        campaign_id: text(),
        adset_name: text(),
        adset_id: text(),
        platform: z.string(),
        total_spend: money(),
        total_clicks: mediaCount(),
        total_impressions: mediaCount(),
        total_reach: mediaCount(),
      }),
    ),
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
    output: z.array(
      z.object({
        campaign_id: text(),
        campaign_name: text(),
        platform: z.string(),
        total_spend: money(),
        total_clicks: mediaCount(),
        total_impressions: mediaCount(),
        total_reach: mediaCount(),
        nb_ads: count(),
        nb_adsets: count(),
      }),
    ),
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
    output: z.array(
      z.object({
        id: z.string(),
        label: z.string(),
        rule_type: z.string(),
        platform: text(),
        campaign_id: text(),
        campaign_name: text(),
        enabled: z.boolean(),
        dry_run: z.boolean(),
        params: jsonObject(),
        last_run_at: instant().nullable(),
        last_run_status: text(),
        last_run_dry_run: z.boolean().nullable(),
        created_at: instant(),
        updated_at: instant(),
      }),
    ),
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
    output: z.array(
      z.object({
        id: z.string(),
        rule_id: z.string(),
        ran_at: instant(),
        dry_run: z.boolean(),
        status: z.string(),
        actions: z.array(z.unknown()),
        summary: text(),
        metrics: z.unknown(),
      }),
    ),
    example: { rule_id: "3f1c9a52-8d0e-4b7a-9c61-2f4e8b7d5a10" },
    description:
      "The latest runs of one ad rule (rule_id), newest first (limit default 30, max 100): time, dry run, status, actions and summary. Without rule_id, or for a rule that is not the account's, an empty array.",
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
    output: ruleFlags,
    errors: ["forbidden", "not_found"],
    example: { rule_id: "3f1c9a52-8d0e-4b7a-9c61-2f4e8b7d5a10", enabled: false },
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
    output: ruleFlags,
    errors: ["plan_free_no_autopilot", "forbidden", "not_found"],
    example: { rule_id: "3f1c9a52-8d0e-4b7a-9c61-2f4e8b7d5a10", dry_run: true },
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
    output: z.object({ rule_id: z.string(), deleted: z.literal(true) }),
    errors: ["forbidden", "not_found"],
    example: { rule_id: "3f1c9a52-8d0e-4b7a-9c61-2f4e8b7d5a10" },
    description:
      "Deletes an ad rule and its run history, for good: `rule_id`. Another account's rule → 403 forbidden; no such rule → 404 not_found.",
    handler: ({ tx, tenant, input }) => deleteRule(tx, tenant, input.rule_id),
  }),
];
