import { z } from "zod";
import { captureHealth } from "../attribution/capture-health.ts";
import { attributionHealthCounts } from "../queries/attribution-health.ts";
import { attributionReport } from "../queries/attribution-report.ts";
import { attributionRows } from "../queries/attribution-rows.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { count, instant, money, rate, text } from "./shapes.ts";

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
];
