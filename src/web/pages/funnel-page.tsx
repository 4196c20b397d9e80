import { funnelReport } from "../../queries/funnel-report.ts";
import { defineReportPage } from "../report-page.tsx";
import { type Column, formatValue } from "../views/report-parts.tsx";

/** The stage counts every breakdown of GET /funnel has after its own key. */
const STAGE_COUNTS: readonly Column[] = [
  { key: "leads", label: "Leads", kind: "count" },
  { key: "applications", label: "Applications", kind: "count" },
  { key: "bookings", label: "Bookings", kind: "count" },
  { key: "shows", label: "Shows", kind: "count" },
  { key: "sales", label: "Sales", kind: "count" },
  { key: "conversion", label: "Lead to sale", kind: "rate" },
];

/** `/reports/funnel`: GET /funnel for the range (the cohort of contacts whose first lead is in it). */
export const funnelPage = defineReportPage({
  path: "/reports/funnel",
  title: "Funnel",
  load: ({ tx, tenant, window, now }) => funnelReport(tx, tenant.accountId, { window, now }),
  tables: (data) => ({
    stages: {
      caption: "Stages",
      columns: [
        { key: "stage", label: "Stage", kind: "text" },
        { key: "count", label: "Contacts", kind: "count" },
        { key: "conversion", label: "From the stage before", kind: "rate" },
      ],
      rows: data.stages,
    },
    by_source: {
      caption: "By source of the lead",
      columns: [{ key: "source", label: "Source", kind: "text" }, ...STAGE_COUNTS],
      rows: data.by_source,
    },
    by_campaign: {
      caption: "By campaign of the lead",
      columns: [{ key: "campaign", label: "Campaign", kind: "text" }, ...STAGE_COUNTS],
      rows: data.by_campaign,
    },
    by_product: {
      caption: "By product sold",
      columns: [
        { key: "product_key", label: "Product key", kind: "text" },
        { key: "product_name", label: "Product", kind: "text" },
        { key: "sales", label: "Sales", kind: "count" },
        { key: "conversion", label: "Share of leads", kind: "rate" },
      ],
      rows: data.by_product,
    },
    time_to_conversion: {
      caption: "Time between stages",
      columns: [
        { key: "from_stage", label: "From", kind: "text" },
        { key: "to_stage", label: "To", kind: "text" },
        { key: "median_days", label: "Median days", kind: "number" },
        { key: "sample_size", label: "Contacts measured", kind: "count" },
      ],
      rows: data.time_to_conversion,
    },
  }),
  view: ({ data, formats, table }) => (
    <>
      <p class="help">
        The contacts whose first lead falls in this range, followed to today through each stage they reached.
      </p>
      <dl class="kpis">
        <div class="kpi">
          <dt>Leads</dt>
          <dd data-kpi="leads" data-value={String(data.stages[0]?.count ?? 0)}>
            {formatValue(data.stages[0]?.count ?? 0, "count", formats)}
          </dd>
        </div>
        <div class="kpi">
          <dt>Lead to sale</dt>
          <dd
            data-kpi="overall_conversion"
            data-value={data.overall_conversion === null ? "" : String(data.overall_conversion)}
          >
            {formatValue(data.overall_conversion, "rate", formats)}
          </dd>
        </div>
      </dl>
      {table("stages")}
      {table("by_source")}
      {table("by_campaign")}
      {table("by_product")}
      {table("time_to_conversion")}
    </>
  ),
});
