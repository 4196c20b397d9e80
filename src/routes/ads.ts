import { z } from "zod";
import { adsCampaigns } from "../queries/ads-campaigns.ts";
import { adsRuleRuns } from "../queries/ads-rule-runs.ts";
import { adsRules } from "../queries/ads-rules.ts";
import { adsSpend } from "../queries/ads-spend.ts";
import { limitParam, reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

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
];
