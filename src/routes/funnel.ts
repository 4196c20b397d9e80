import { z } from "zod";
import { FUNNEL_STAGES, funnelReport } from "../queries/funnel-report.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { appliedWindow, count, rate, text } from "./shapes.ts";

const stageCounts = {
  leads: count(),
  applications: count(),
  bookings: count(),
  shows: count(),
  sales: count(),
  conversion: rate(),
};

export const funnelRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/funnel",
    scope: "read:funnel",
    input: windowQuery({}),
    output: z.object({
      ...appliedWindow,
      stages: z.array(z.object({ stage: z.enum(FUNNEL_STAGES), count: count(), conversion: rate() })),
      overall_conversion: rate(),
      by_source: z.array(z.object({ source: text(), ...stageCounts })),
      by_campaign: z.array(z.object({ campaign: text(), ...stageCounts })),
      by_product: z.array(
        z.object({ product_key: text(), product_name: text(), sales: count(), conversion: rate() }),
      ),
      time_to_conversion: z.array(
        z.object({
          from_stage: z.enum(FUNNEL_STAGES),
          to_stage: z.enum(FUNNEL_STAGES),
          median_days: z.number().nullable(),
          sample_size: count(),
        }),
      ),
    }),
    description:
      "Cohort funnel of the contacts whose first lead falls in the window (from/to, default the last 30 days), followed to now: lead → application → booking → show → sale with counts and step conversion, conversion by the lead's source and campaign and by the sale's product, and median days between consecutive stages.",
    handler: ({ tx, tenant, input, now }) =>
      funnelReport(tx, tenant.accountId, { window: reportWindow(input, tenant, now), now }),
  }),
];
