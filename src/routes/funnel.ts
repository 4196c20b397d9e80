import { funnelReport } from "../queries/funnel-report.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

export const funnelRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/funnel",
    scope: "read:funnel",
    input: windowQuery({}),
    description:
      "Cohort funnel of the contacts whose first lead falls in the window (from/to, default the last 30 days), followed to now: lead → application → booking → show → sale with counts and step conversion, conversion by the lead's source and campaign and by the sale's product, and median days between consecutive stages.",
    handler: ({ tx, tenant, input, now }) =>
      funnelReport(tx, tenant.accountId, { window: reportWindow(input, tenant, now), now }),
  }),
];
