import { z } from "zod";
import { PNL_EXTRA_FRAGMENTS } from "../http/redact.ts";
import { financePnl } from "../queries/finance-pnl.ts";
import { reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { appliedWindow, money } from "./shapes.ts";

const pnlFigures = {
  revenue: money(),
  refunds: money(),
  disputes: money(),
  net_revenue: money(),
  ad_spend: money(),
  commissions: money(),
  result: money(),
};

export const financeRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/finance/pnl",
    scope: "read:finance",
    input: windowQuery({}),
    output: z.object({
      ...appliedWindow,
      ...pnlFigures,
      by_month: z.array(z.object({ month: z.string().regex(/^\d{4}-\d{2}$/), ...pnlFigures })),
    }),
    description:
      "P&L over a window (from/to, default the last 30 days): revenue, refunds, disputes, net revenue, ad spend, commissions and the result (net revenue − ad spend − commissions), in total and per calendar month. Margins are never returned.",
    // SPEC: finance/pnl additionally strips margin, profit, wholesale, markup, cost_of and cogs.
    redactFragments: PNL_EXTRA_FRAGMENTS,
    handler: ({ tx, tenant, input, now }) =>
      financePnl(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
];
