import { z } from "zod";
import { salesCycle } from "../queries/sales-cycle.ts";
import { salesReps } from "../queries/sales-reps.ts";
import { salesSummary } from "../queries/sales-summary.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { appliedWindow, count, day, money, rate } from "./shapes.ts";

/** Days of a sales cycle, 1 decimal; null without any cycle. */
const days = () => z.number().nullable();

export const salesRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/sales/summary",
    scope: "read:sales",
    input: windowQuery({}),
    output: z.object({
      ...appliedWindow,
      sales: count(),
      revenue: money(),
      ticket_moyen: money().nullable(),
      refund_amount: money(),
      dispute_amount: money(),
      net_revenue: money(),
      sales_lost: count(),
      close_rate: rate(),
      pipeline: z.object({
        leads: count(),
        applications: count(),
        bookings: count(),
        meetings: count(),
        meetings_past: count(),
        meetings_upcoming: count(),
        meetings_cancelled: count(),
        shows: count(),
        applications_without_booking: count(),
      }),
      no_shows: count(),
      no_show_rate: rate(),
    }),
    description:
      "Sales summary over a window (from/to, default the last 30 days): sales, revenue, average ticket, refunds, disputes, net revenue, lost sales, close rate; the pipeline (leads, applications, bookings, meetings past, upcoming and cancelled, shows, applications without a booking); no-shows and no-show rate.",
    handler: ({ tx, tenant, input, now }) =>
      salesSummary(tx, tenant.accountId, { window: reportWindow(input, tenant, now), now }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/sales/reps",
    scope: "read:sales",
    input: windowQuery({}),
    output: z.array(
      z.object({
        rep_name: z.string().nullable(),
        bookings: count(),
        meetings: count(),
        shows: count(),
        no_shows: count(),
        sales: count(),
        revenue: money(),
        close_rate: rate(),
        no_show_rate: rate(),
        ticket_moyen: money().nullable(),
        contacts_met: count(),
        contacts_closed: count(),
      }),
    ),
    description:
      "Per-rep performance over a window (from/to, default the last 30 days): bookings, meetings, shows, no-shows, sales, revenue, close rate, no-show rate, average ticket, contacts met and closed. Events without a rep form the row whose rep_name is null.",
    handler: ({ tx, tenant, input, now }) =>
      salesReps(tx, tenant.accountId, { window: reportWindow(input, tenant, now), now }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/sales/cycle",
    scope: "read:sales",
    input: windowQuery({}),
    output: z.object({
      ...appliedWindow,
      avg_days: days(),
      median_days: days(),
      p25_days: days(),
      p75_days: days(),
      sample_size: count(),
      conversions: count(),
      weekly_trend: z.array(z.object({ week_start: day(), conversions: count(), avg_days: days() })),
    }),
    description:
      "Sales cycle for contacts whose first sale falls in the window (from/to, default the last 30 days): days from first lead to first sale (average, median, quartiles), sample size, conversions, and a weekly trend.",
    handler: ({ tx, tenant, input, now }) =>
      salesCycle(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
];
