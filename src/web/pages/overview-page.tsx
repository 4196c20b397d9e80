import { z } from "zod";
import { BREAKDOWN_DIMENSIONS, dashboardBreakdown } from "../../queries/dashboard-breakdown.ts";
import { dashboardDaily } from "../../queries/dashboard-daily.ts";
import { dashboardKpis } from "../../queries/dashboard-kpis.ts";
import { monthGoals } from "../../queries/month-goals.ts";
import { monthStart, reportWindow } from "../../reports/window.ts";
import { defineReportPage } from "../report-page.tsx";
import { type Column, type ColumnKind, formatValue, JsonData, withQuery } from "../views/report-parts.tsx";

/** The headline figures, in the order shown, with how each reads. */
const KPIS: readonly { key: string; label: string; kind: ColumnKind }[] = [
  { key: "leads", label: "Leads", kind: "count" },
  { key: "bookings", label: "Bookings", kind: "count" },
  { key: "shows", label: "Shows", kind: "count" },
  { key: "total_sales", label: "Sales", kind: "count" },
  { key: "revenue", label: "Revenue", kind: "money" },
  { key: "net_revenue", label: "Net revenue", kind: "money" },
  { key: "spend", label: "Spend", kind: "money" },
  { key: "roas", label: "ROAS", kind: "number" },
  { key: "spend_per_lead", label: "Spend per lead", kind: "money" },
  { key: "show_rate", label: "Show rate", kind: "rate" },
  { key: "close_rate", label: "Close rate", kind: "rate" },
  { key: "ticket_moyen", label: "Average sale", kind: "money" },
];

const DAILY_COLUMNS: readonly Column[] = [
  { key: "report_date", label: "Day", kind: "date" },
  { key: "leads", label: "Leads", kind: "count" },
  { key: "applications", label: "Applications", kind: "count" },
  { key: "bookings", label: "Bookings", kind: "count" },
  { key: "meetings", label: "Meetings", kind: "count" },
  { key: "no_shows", label: "No-shows", kind: "count" },
  { key: "sales", label: "Sales", kind: "count" },
  { key: "revenue", label: "Revenue", kind: "money" },
  { key: "spend", label: "Spend", kind: "money" },
];

const BREAKDOWN_LABELS: Record<(typeof BREAKDOWN_DIMENSIONS)[number], string> = {
  source: "Source",
  campaign: "Campaign",
  product: "Product",
  rep: "Sales rep",
};

/** Goals name some metrics as people say them; the KPI object names them as the API does. */
const GOAL_METRICS: Readonly<Record<string, string>> = { sales: "total_sales" };

const params = z.object({
  dim: z
    .enum(BREAKDOWN_DIMENSIONS, { error: `dim must be one of ${BREAKDOWN_DIMENSIONS.join(", ")}` })
    .default("source"),
});

/** `/`: the KPIs with the month's goals, the daily chart and a breakdown. */
export const overviewPage = defineReportPage({
  path: "/",
  title: "Overview",
  params,
  scripts: ["uplot.js", "chart.js"],
  async load({ tx, tenant, window, query, now }) {
    const id = tenant.accountId;
    const period = monthStart(now, tenant.timezone);
    const monthToDate = reportWindow({ from: period }, tenant, now);
    // One after the other: a transaction's statements run one at a time on its connection anyway.
    const kpis = await dashboardKpis(tx, id, { window });
    const daily = await dashboardDaily(tx, id, { window });
    const breakdown = await dashboardBreakdown(tx, id, { window, dim: query.dim });
    const goals = await monthGoals(tx, id, { period });
    // Month-to-date figures only measure goals: without any, they are not read.
    const month = goals.length > 0 ? await dashboardKpis(tx, id, { window: monthToDate }) : null;
    return { kpis, daily, breakdown, goals, month, period };
  },
  tables: (data, query) => ({
    daily: { caption: "Day by day", columns: DAILY_COLUMNS, rows: data.daily },
    breakdown: {
      caption: `By ${BREAKDOWN_LABELS[query.dim].toLowerCase()}`,
      columns: [
        { key: "dimension_key", label: BREAKDOWN_LABELS[query.dim], kind: "text" },
        { key: "leads", label: "Leads", kind: "count" },
        { key: "applications", label: "Applications", kind: "count" },
        { key: "bookings", label: "Bookings", kind: "count" },
        { key: "shows", label: "Shows", kind: "count" },
        { key: "no_shows", label: "No-shows", kind: "count" },
        { key: "sales", label: "Sales", kind: "count" },
        { key: "revenue", label: "Revenue", kind: "money" },
      ],
      rows: data.breakdown,
    },
    goals: {
      caption: "This month's goals",
      columns: [
        { key: "metric_key", label: "Metric", kind: "text" },
        { key: "target_value", label: "Goal", kind: "number" },
        { key: "actual", label: "Month to date", kind: "number" },
        { key: "progress", label: "Progress", kind: "rate" },
      ],
      rows: data.goals.map((g) => {
        const month = (data.month ?? {}) as unknown as Record<string, number | null>;
        const actual = month[GOAL_METRICS[g.metric_key] ?? g.metric_key] ?? null;
        return {
          ...g,
          actual,
          progress: actual === null || g.target_value === 0 ? null : actual / g.target_value,
        };
      }),
    },
  }),
  view: ({ data, query, window, formats, table }) => {
    const kpis = data.kpis as unknown as Record<string, number | null>;
    const chart = {
      days: data.daily.map((d) => d.report_date),
      series: [
        { label: "Leads", values: data.daily.map((d) => d.leads), axis: "count" },
        { label: "Sales", values: data.daily.map((d) => d.sales), axis: "count" },
        { label: "Revenue", values: data.daily.map((d) => d.revenue), axis: "money" },
        { label: "Spend", values: data.daily.map((d) => d.spend), axis: "money" },
      ],
      currency: formats.currency,
    };
    return (
      <>
        <section aria-labelledby="kpi-title">
          <h2 id="kpi-title" class="visually-hidden">
            Key figures
          </h2>
          <dl class="kpis">
            {KPIS.map((k) => (
              <div class="kpi">
                <dt>{k.label}</dt>
                <dd data-kpi={k.key} data-value={kpis[k.key] === null ? "" : String(kpis[k.key])}>
                  {formatValue(kpis[k.key], k.kind, formats)}
                </dd>
              </div>
            ))}
          </dl>
        </section>
        {data.goals.length > 0 ? (
          table("goals")
        ) : (
          <p class="help">No goal set for this month (PUT /goals).</p>
        )}
        <section aria-labelledby="chart-title">
          <h2 id="chart-title">Leads, sales, revenue and spend per day</h2>
          <div
            id="daily-chart"
            class="chart"
            role="img"
            aria-label={`Chart of leads, sales, revenue and spend per day from ${window.from} to ${window.to}; the same figures are in the table "Day by day".`}
          />
          <JsonData id="daily-chart-data" value={chart} />
        </section>
        <nav aria-label="Breakdown dimension" class="tabs">
          <ul>
            {BREAKDOWN_DIMENSIONS.map((d) => (
              <li>
                <a
                  href={withQuery("/", { from: window.from, to: window.to, dim: d })}
                  aria-current={d === query.dim ? "page" : undefined}
                >
                  {BREAKDOWN_LABELS[d]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {table("breakdown")}
        {table("daily")}
      </>
    );
  },
});
