import { z } from "zod";
import { BREAKDOWN_DIMENSIONS, dashboardBreakdown } from "../queries/dashboard-breakdown.ts";
import { dashboardDaily } from "../queries/dashboard-daily.ts";
import { dashboardKpis } from "../queries/dashboard-kpis.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { appliedWindow, count, day, money, rate } from "./shapes.ts";

const dailyRow = z.object({
  report_date: day(),
  leads: count(),
  applications: count(),
  bookings: count(),
  meetings: count(),
  no_shows: count(),
  sales: count(),
  revenue: money(),
  spend: money(),
});

export const dashboardRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/dashboard/kpis",
    scope: "read:dashboard",
    input: windowQuery({}),
    output: z.object({
      ...appliedWindow,
      leads: count(),
      applications: count(),
      bookings: count(),
      meetings: count(),
      shows: count(),
      no_shows: count(),
      total_sales: count(),
      revenue: money(),
      ticket_moyen: money().nullable(),
      refund_amount: money(),
      dispute_amount: money(),
      net_revenue: money(),
      spend: money(),
      spend_per_lead: money().nullable(),
      spend_per_sale: money().nullable(),
      roas: rate(),
      show_rate: rate(),
      close_rate: rate(),
    }),
    description:
      "Headline KPIs over a window (from/to, default the last 30 days): leads, applications, bookings, meetings, shows, no-shows, sales, revenue, average ticket, refunds, disputes, net revenue, spend, spend per lead and per sale, ROAS, show and close rates.",
    handler: ({ tx, tenant, input, now }) =>
      dashboardKpis(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/dashboard/daily",
    scope: "read:dashboard",
    input: windowQuery({}),
    output: z.array(dailyRow),
    description:
      "One row per day of the window (from/to, default the last 30 days), days without activity included: leads, applications, bookings, meetings, no-shows, sales, revenue, spend.",
    handler: ({ tx, tenant, input, now }) =>
      dashboardDaily(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/dashboard/breakdowns",
    scope: "read:dashboard",
    input: windowQuery({
      dim: z
        .enum(BREAKDOWN_DIMENSIONS, { error: `must be one of ${BREAKDOWN_DIMENSIONS.join(", ")}` })
        .default("source"),
    }),
    output: z.array(
      z.object({
        dimension_key: z.string().nullable(),
        leads: count(),
        applications: count(),
        bookings: count(),
        shows: count(),
        no_shows: count(),
        sales: count(),
        revenue: money(),
      }),
    ),
    description:
      "The dashboard's counts split by `dim` (source, the default; campaign; product; rep) over a window (from/to, default the last 30 days): one row per value (dimension_key) with leads, applications, bookings, shows, no-shows, sales and revenue.",
    handler: ({ tx, tenant, input, now }) =>
      dashboardBreakdown(tx, tenant.accountId, {
        window: reportWindow(input, tenant, now),
        dim: input.dim,
      }),
  }),
];
