import { salesCycle } from "../queries/sales-cycle.ts";
import { salesReps } from "../queries/sales-reps.ts";
import { salesSummary } from "../queries/sales-summary.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

export const salesRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/sales/summary",
    scope: "read:sales",
    input: windowQuery({}),
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
    description:
      "Sales cycle for contacts whose first sale falls in the window (from/to, default the last 30 days): days from first lead to first sale (average, median, quartiles), sample size, conversions, and a weekly trend.",
    handler: ({ tx, tenant, input, now }) =>
      salesCycle(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
];
