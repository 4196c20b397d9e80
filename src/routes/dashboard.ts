import { dashboardKpis } from "../queries/dashboard-kpis.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

export const dashboardRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/dashboard/kpis",
    scope: "read:dashboard",
    input: windowQuery({}),
    description:
      "Headline KPIs over a window (from/to, default the last 30 days): leads, applications, bookings, meetings, shows, no-shows, sales, revenue, average ticket, refunds, disputes, net revenue, spend, spend per lead and per sale (cost per lead and per sale), ROAS, show and close rates.",
    handler: ({ tx, tenant, input, now }) =>
      dashboardKpis(tx, tenant.accountId, { window: reportWindow(input, tenant, now), now }),
  }),
];
