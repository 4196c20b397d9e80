import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface DailyRow {
  report_date: string;
  leads: number;
  applications: number;
  bookings: number;
  meetings: number;
  no_shows: number;
  sales: number;
  revenue: number;
  spend: number;
}

/**
 * One row per calendar day of the window, days without activity included (zeros), with the
 * dashboard KPIs' definitions (docs/metrics.md), from the daily rollup's `total` rows: summed over
 * the rows they give the KPI totals.
 */
export async function dashboardDaily(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<DailyRow[]> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  return rows<DailyRow>(
    db,
    sql`
    with days as (
      select d::date as day from generate_series(${w.from}::date, ${w.to}::date, interval '1 day') as d
    ),
    r as (
      select r.day, r.leads, r.applications, r.bookings, r.meetings, r.no_shows, r.sales, r.revenue
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'total'
        and r.day between ${w.from}::date and ${w.to}::date
    ),
    spend as (
      select s.spend_date as day, sum(s.spend) as spend
      from ad_spend_daily s
      where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
      group by 1
    )
    select
      to_char(days.day, 'YYYY-MM-DD') as report_date,
      coalesce(r.leads, 0) as leads,
      coalesce(r.applications, 0) as applications,
      coalesce(r.bookings, 0) as bookings,
      coalesce(r.meetings, 0) as meetings,
      coalesce(r.no_shows, 0) as no_shows,
      coalesce(r.sales, 0) as sales,
      round(coalesce(r.revenue, 0), 2)::float8 as revenue,
      round(coalesce(spend.spend, 0), 2)::float8 as spend
    from days
    left join r on r.day = days.day
    left join spend on spend.day = days.day
    order by days.day`,
  );
}
