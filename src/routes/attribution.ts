import { z } from "zod";
import { captureHealth } from "../attribution/capture-health.ts";
import { attributionHealthCounts } from "../queries/attribution-health.ts";
import { attributionReport } from "../queries/attribution-report.ts";
import { attributionRows } from "../queries/attribution-rows.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

export const attributionRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/attribution",
    scope: "read:attribution",
    input: windowQuery({}),
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
    description:
      "Attribution report over a window (from/to, default the last 30 days): per source, campaign and ad, spend, gross revenue, refunds, disputes, net revenue, gross and net ROI, touchpoints.",
    handler: ({ tx, tenant, input, now }) =>
      attributionReport(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
];
