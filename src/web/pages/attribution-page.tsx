import { attributionReport } from "../../queries/attribution-report.ts";
import { attributionRows } from "../../queries/attribution-rows.ts";
import { defineReportPage } from "../report-page.tsx";
import type { Column } from "../views/report-parts.tsx";

/** GET /attribution, per ad: its results, then the three models' credit and what is left of revenue. */
const AD_COLUMNS: readonly Column[] = [
  { key: "out_ad_name", label: "Ad", kind: "text" },
  { key: "out_ad_id", label: "Ad id", kind: "text" },
  { key: "out_platform", label: "Platform", kind: "text" },
  { key: "out_campaign_name", label: "Campaign", kind: "text" },
  { key: "out_total_spend", label: "Spend", kind: "money" },
  { key: "out_leads", label: "Leads", kind: "count" },
  { key: "out_bookings", label: "Bookings", kind: "count" },
  { key: "out_meetings_present", label: "Shows", kind: "count" },
  { key: "out_sales", label: "Sales", kind: "count" },
  { key: "out_revenue", label: "Revenue", kind: "money" },
  { key: "out_sales_ft", label: "First-touch sales", kind: "count" },
  { key: "out_revenue_ft", label: "First-touch revenue", kind: "money" },
  { key: "out_sales_lt", label: "Last-touch sales", kind: "count" },
  { key: "out_revenue_lt", label: "Last-touch revenue", kind: "money" },
  { key: "out_sales_assisted", label: "Assisted sales", kind: "count" },
  { key: "out_revenue_assisted", label: "Assisted revenue", kind: "money" },
  { key: "out_refund_amount", label: "Refunds", kind: "money" },
  { key: "out_dispute_amount", label: "Disputes", kind: "money" },
  { key: "out_net_revenue", label: "Net revenue", kind: "money" },
  { key: "out_show_rate", label: "Show rate", kind: "rate" },
  { key: "out_close_rate", label: "Close rate", kind: "rate" },
  { key: "out_rep_names", label: "Sales reps", kind: "text" },
];

/** GET /attribution/report: where ROI per ad is defined (and what no ad was credited). */
const REPORT_COLUMNS: readonly Column[] = [
  { key: "out_source", label: "Source", kind: "text" },
  { key: "out_campaign", label: "Campaign", kind: "text" },
  { key: "out_ad_name", label: "Ad", kind: "text" },
  { key: "out_ad_id", label: "Ad id", kind: "text" },
  { key: "out_spend", label: "Spend", kind: "money" },
  { key: "out_gross_revenue", label: "Gross revenue", kind: "money" },
  { key: "out_refund_amount", label: "Refunds", kind: "money" },
  { key: "out_dispute_amount", label: "Disputes", kind: "money" },
  { key: "out_net_revenue", label: "Net revenue", kind: "money" },
  { key: "out_roi_gross", label: "Gross ROI", kind: "rate" },
  { key: "out_roi_net", label: "Net ROI", kind: "rate" },
  { key: "out_touchpoints", label: "Touchpoints", kind: "count" },
];

/** `/reports/attribution`: what GET /attribution and GET /attribution/report return for the range. */
export const attributionPage = defineReportPage({
  path: "/reports/attribution",
  title: "Attribution",
  async load({ tx, tenant, window }) {
    // One after the other: each folds the rollup first, in this one transaction.
    const ads = await attributionRows(tx, tenant.accountId, { window });
    const report = await attributionReport(tx, tenant.accountId, { window });
    return { ads, report };
  },
  tables: (data) => ({
    ads: { caption: "Per ad", columns: AD_COLUMNS, rows: data.ads },
    roi: {
      caption: "Return on spend by source, campaign and ad",
      columns: REPORT_COLUMNS,
      rows: data.report,
    },
  }),
  view: ({ table }) => (
    <>
      <p class="help">
        First touch credits a sale to the first ad the contact touched in the 365 days before it, last touch
        to the ad the sale came from, assisted to every other ad touched in between. ROI is (revenue − spend)
        / spend; net revenue takes refunds and disputes off.
      </p>
      {table("ads")}
      {table("roi")}
    </>
  ),
});
