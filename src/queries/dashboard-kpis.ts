import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface DashboardKpis {
  from: string;
  to: string;
  leads: number;
  applications: number;
  bookings: number;
  meetings: number;
  shows: number;
  no_shows: number;
  total_sales: number;
  revenue: number;
  ticket_moyen: number | null;
  refund_amount: number;
  dispute_amount: number;
  net_revenue: number;
  spend: number;
  spend_per_lead: number | null;
  spend_per_sale: number | null;
  roas: number | null;
  show_rate: number | null;
  close_rate: number | null;
}

/**
 * The KPI object over a window (docs/metrics.md "Dashboard"), from the daily rollup's `total` rows:
 * counts by event day, meetings by booking day (past when the day is over), sales are counted
 * purchases with their revenue, refunds and disputes; spend by spend date. Money rounded to cents,
 * rates to 4 decimals, x/0 → null.
 */
export async function dashboardKpis(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<DashboardKpis> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  const [row] = await rows<DashboardKpis>(
    db,
    sql`
    with r as (
      select
        coalesce(sum(r.leads), 0) as leads,
        coalesce(sum(r.applications), 0) as applications,
        coalesce(sum(r.bookings), 0) as bookings,
        coalesce(sum(r.no_shows), 0) as no_shows,
        coalesce(sum(r.meetings), 0) as meetings,
        coalesce(sum(r.meetings) filter (where r.day < ${w.today}::date), 0) as past_meetings,
        coalesce(sum(r.sales), 0) as sales,
        coalesce(sum(r.revenue), 0) as revenue,
        coalesce(sum(r.refunds), 0) as refunds,
        coalesce(sum(r.disputes), 0) as disputes
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'total'
        and r.day between ${w.from}::date and ${w.to}::date
    ),
    spend as (
      select coalesce(sum(s.spend), 0) as spend
      from ad_spend_daily s
      where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
    ),
    base as (
      select r.*, greatest(r.past_meetings - r.no_shows, 0) as shows, spend.spend from r, spend
    )
    select
      ${w.from} as "from",
      ${w.to} as "to",
      leads::int as leads,
      applications::int as applications,
      bookings::int as bookings,
      meetings::int as meetings,
      shows::int as shows,
      no_shows::int as no_shows,
      sales::int as total_sales,
      round(revenue, 2)::float8 as revenue,
      round(revenue / nullif(sales, 0), 2)::float8 as ticket_moyen,
      round(refunds, 2)::float8 as refund_amount,
      round(disputes, 2)::float8 as dispute_amount,
      round(revenue - refunds - disputes, 2)::float8 as net_revenue,
      round(spend, 2)::float8 as spend,
      round(spend / nullif(leads, 0), 2)::float8 as spend_per_lead,
      round(spend / nullif(sales, 0), 2)::float8 as spend_per_sale,
      round(revenue / nullif(spend, 0), 4)::float8 as roas,
      round(shows::numeric / nullif(shows + no_shows, 0), 4)::float8 as show_rate,
      round(sales::numeric / nullif(shows, 0), 4)::float8 as close_rate
    from base`,
  );
  if (!row) throw new Error("dashboard KPIs: no row");
  return row;
}
