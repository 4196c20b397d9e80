import { z } from "zod";
import { captureHealth } from "../attribution/capture-health.ts";
import { modelNames } from "../attribution/models/credit.ts";
import { attributionHealthCounts } from "../queries/attribution-health.ts";
import { attributionReport } from "../queries/attribution-report.ts";
import { attributionRows } from "../queries/attribution-rows.ts";
import { attributionModels } from "../reports/attribution-models.ts";
import { optionalIntParam, queryParamDocs, reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { count, instant, money, rate, text } from "./shapes.ts";

/** A decimal query parameter within [min, max]; absent → `fallback`. */
function decimalParam(fallback: number, min: number, max: number, description: string) {
  const schema = z
    .string()
    .regex(/^\d+(\.\d+)?$/, { message: "must be a decimal number", abort: true })
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`)
    .optional()
    .transform((n) => n ?? fallback);
  queryParamDocs.add(schema, { type: "number", minimum: min, maximum: max, default: fallback, description });
  return schema;
}

const modelsInput = windowQuery({
  model: z.enum(modelNames, { error: `must be one of ${modelNames.join(", ")}` }).default("last_touch"),
  level: z.enum(["ad", "campaign", "channel"], { error: "must be ad, campaign or channel" }).default("ad"),
  lookback_days: optionalIntParam({
    min: 1,
    max: 365,
    description: "days of touches before each sale (default 30)",
  }),
  half_life_days: decimalParam(7, 0.01, 365, "time_decay: a touch this many days older weighs half"),
  first_weight: decimalParam(0.4, 0, 1, "position_based: the first touch's share"),
  last_weight: decimalParam(0.4, 0, 1, "position_based: the last touch's share"),
  order: optionalIntParam({ min: 1, max: 3, description: "markov: the chain's order (default 1)" }),
}).refine((q) => q.first_weight + q.last_weight <= 1, {
  message: "first_weight and last_weight must not sum to more than 1",
  path: ["first_weight"],
});

export const attributionRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/attribution",
    scope: "read:attribution",
    input: windowQuery({}),
    output: z.array(
      z.object({
        out_ad_id: z.string(),
        out_ad_name: text(),
        out_campaign_id: text(),
        out_campaign_name: text(),
        out_adset_id: text(),
        out_adset_name: text(),
        out_platform: z.string(),
        out_total_spend: money(),
        out_total_clicks: count(),
        out_total_impressions: count(),
        out_total_reach: count(),
        out_leads: count(),
        out_applications: count(),
        out_bookings: count(),
        out_meetings: count(),
        out_meetings_present: count(),
        out_meetings_no_show: count(),
        out_sales: count(),
        out_revenue: money(),
        out_show_rate: rate(),
        out_close_rate: rate(),
        out_rep_names: z.array(z.string()),
        out_sales_ft: count(),
        out_revenue_ft: money(),
        out_sales_lt: count(),
        out_revenue_lt: money(),
        out_sales_assisted: count(),
        out_revenue_assisted: money(),
        out_refund_amount: money(),
        out_dispute_amount: money(),
        out_net_revenue: money(),
        out_is_excluded: z.boolean(),
      }),
    ),
    description:
      "One row per ad with spend or results over a window (from/to, default the last 30 days): identity, spend, clicks, impressions, reach; leads, applications, bookings, meetings, shows, no-shows, sales and revenue credited to each conversion's ad of record; first-touch, last-touch and assisted sales and revenue; refunds, disputes and net revenue; rep names; excluded flag.",
    handler: ({ tx, tenant, input, now }) =>
      attributionRows(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/attribution/health",
    scope: "read:attribution",
    input: z.object({}),
    output: z.object({
      verdict: z.enum(["good", "degraded", "broken", "no_data"]),
      events_pub_30j: count(),
      pct_exact_id: z.number(),
      pct_par_nom: z.number(),
      pct_non_resolu: z.number(),
      pixel_sessions_30j: count(),
      pixel_derniere_activite: instant().nullable(),
      pixel_pct_avec_id: z.number().nullable(),
      issues: z.array(
        z.object({
          code: z.enum(["unresolved_macros", "unresolved_ads", "leads_without_utm", "pixel_silent"]),
          message: z.string(),
          count: count(),
        }),
      ),
    }),
    description:
      "Capture health over the last 30 days: verdict, events carrying an ad signal and how they resolved (exact id, by name, unresolved), tracking-script sessions and last activity, and issues to fix (unresolved macros, unknown ads, leads without UTM, silent pixel).",
    handler: async ({ tx, tenant, now }) => {
      const { counts, unresolved } = await attributionHealthCounts(tx, tenant.accountId, {
        window: reportWindow({}, tenant, now),
        now,
      });
      return captureHealth(counts, unresolved);
    },
  }),
  defineRoute({
    methods: ["GET"],
    path: "/attribution/report",
    scope: "read:attribution",
    input: windowQuery({}),
    output: z.array(
      z.object({
        out_source: z.string(),
        out_campaign: text(),
        out_ad_id: text(),
        out_ad_name: text(),
        out_spend: money(),
        out_gross_revenue: money(),
        out_refund_amount: money(),
        out_dispute_amount: money(),
        out_net_revenue: money(),
        out_roi_gross: rate(),
        out_roi_net: rate(),
        out_touchpoints: count(),
      }),
    ),
    description:
      "Attribution report over a window (from/to, default the last 30 days): per source, campaign and ad, spend, gross revenue, refunds, disputes, net revenue, gross and net ROI, touchpoints.",
    handler: ({ tx, tenant, input, now }) =>
      attributionReport(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/attribution/models",
    scope: "read:attribution",
    input: modelsInput,
    output: z.array(
      z.object({
        key: z.string(),
        platform: text(),
        ad_id: text(),
        ad_name: text(),
        campaign_id: text(),
        campaign_name: text(),
        channel: text(),
        credited_sales: z.number(),
        credited_revenue: money(),
        credited_net_revenue: money(),
        spend: money().nullable(),
        roi_gross: rate(),
        roi_net: rate(),
        share: z.number(),
        paths_used: count().nullable(),
        ci95: z.tuple([z.number(), z.number()]).nullable(),
      }),
    ),
    description:
      "Counted sales of a window (from/to, default the last 30 days) credited under one attribution model (model: first_touch, last_touch (the default), last_non_direct, linear, time_decay with half_life_days, position_based with first_weight/last_weight, markov with order 1-3, shapley) at level ad, campaign or channel, from touches in the lookback_days (default 30, max 365) before each sale: credited sales (4 decimals), revenue and net revenue (refunds and disputes on the same shares, to the cent; columns sum exactly to the window's totals), spend and gross/net ROI (ad and campaign levels), share of sales, and for markov/shapley the paths used. Sales without a touch form the (none) row. Formulas: docs/attribution.md.",
    handler: ({ tx, tenant, input, now }) =>
      attributionModels(tx, tenant.accountId, {
        window: reportWindow(input, tenant, now),
        model: input.model,
        level: input.level,
        lookbackDays: input.lookback_days ?? 30,
        halfLifeDays: input.half_life_days,
        firstWeight: input.first_weight,
        lastWeight: input.last_weight,
        order: input.order ?? 1,
      }),
  }),
];
