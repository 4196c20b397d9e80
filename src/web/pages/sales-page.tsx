import { salesReps } from "../../queries/sales-reps.ts";
import { salesSummary } from "../../queries/sales-summary.ts";
import { defineReportPage } from "../report-page.tsx";
import { type Column, type ColumnKind, type Formats, formatValue } from "../views/report-parts.tsx";

/** GET /sales/summary's figures in the order shown; `pipeline.*` are its nested pipeline object. */
type Figure = { key: string; label: string; kind: ColumnKind };

const SALES: readonly Figure[] = [
  { key: "sales", label: "Sales", kind: "count" },
  { key: "revenue", label: "Revenue", kind: "money" },
  { key: "ticket_moyen", label: "Average sale", kind: "money" },
  { key: "refund_amount", label: "Refunds", kind: "money" },
  { key: "dispute_amount", label: "Disputes", kind: "money" },
  { key: "net_revenue", label: "Net revenue", kind: "money" },
  { key: "sales_lost", label: "Lost sales", kind: "count" },
  { key: "close_rate", label: "Close rate", kind: "rate" },
  { key: "no_shows", label: "No-shows", kind: "count" },
  { key: "no_show_rate", label: "No-show rate", kind: "rate" },
];

const PIPELINE: readonly Figure[] = [
  { key: "pipeline.leads", label: "Leads", kind: "count" },
  { key: "pipeline.applications", label: "Applications", kind: "count" },
  { key: "pipeline.applications_without_booking", label: "Applications not booked", kind: "count" },
  { key: "pipeline.bookings", label: "Bookings", kind: "count" },
  { key: "pipeline.meetings", label: "Meetings", kind: "count" },
  { key: "pipeline.meetings_past", label: "Meetings held or missed", kind: "count" },
  { key: "pipeline.meetings_upcoming", label: "Meetings to come", kind: "count" },
  { key: "pipeline.meetings_cancelled", label: "Meetings cancelled", kind: "count" },
  { key: "pipeline.shows", label: "Shows", kind: "count" },
];

const REP_COLUMNS: readonly Column[] = [
  { key: "rep_name", label: "Sales rep", kind: "text" },
  { key: "bookings", label: "Bookings", kind: "count" },
  { key: "meetings", label: "Meetings", kind: "count" },
  { key: "shows", label: "Shows", kind: "count" },
  { key: "no_shows", label: "No-shows", kind: "count" },
  { key: "sales", label: "Sales", kind: "count" },
  { key: "revenue", label: "Revenue", kind: "money" },
  { key: "close_rate", label: "Close rate", kind: "rate" },
  { key: "no_show_rate", label: "No-show rate", kind: "rate" },
  { key: "ticket_moyen", label: "Average sale", kind: "money" },
  { key: "contacts_met", label: "Contacts met", kind: "count" },
  { key: "contacts_closed", label: "Contacts closed", kind: "count" },
];

/** A summary figure by its key, `pipeline.x` reading the nested object. */
function figure(summary: Record<string, unknown>, key: string): unknown {
  const [head, rest] = key.split(".", 2) as [string, string | undefined];
  const value = summary[head];
  return rest === undefined ? value : (value as Record<string, unknown>)[rest];
}

function Figures(props: { figures: readonly Figure[]; summary: Record<string, unknown>; formats: Formats }) {
  return (
    <dl class="kpis">
      {props.figures.map((k) => {
        const value = figure(props.summary, k.key);
        return (
          <div class="kpi">
            <dt>{k.label}</dt>
            <dd data-kpi={k.key} data-value={value === null ? "" : String(value)}>
              {formatValue(value, k.kind, props.formats)}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

/** `/reports/sales`: GET /sales/summary and GET /sales/reps for the range. */
export const salesPage = defineReportPage({
  path: "/reports/sales",
  title: "Sales reps",
  async load({ tx, tenant, window, now }) {
    // One after the other: each folds the rollup first, in this one transaction.
    const summary = await salesSummary(tx, tenant.accountId, { window, now });
    const reps = await salesReps(tx, tenant.accountId, { window, now });
    return { summary, reps };
  },
  tables: (data) => ({
    reps: {
      caption: "Per sales rep",
      columns: REP_COLUMNS,
      rows: data.reps,
    },
  }),
  view: ({ data, formats, table }) => {
    const summary = data.summary as unknown as Record<string, unknown>;
    return (
      <>
        <section aria-labelledby="summary-title">
          <h2 id="summary-title">Sales summary</h2>
          <Figures figures={SALES} summary={summary} formats={formats} />
          <h3>Pipeline</h3>
          <Figures figures={PIPELINE} summary={summary} formats={formats} />
        </section>
        {table("reps")}
        <p class="help">The row whose rep is “—” holds the events no rep was named on.</p>
      </>
    );
  },
});
