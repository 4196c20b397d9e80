import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

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
 * dashboard KPIs' definitions (docs/metrics.md): summed over the rows they give the KPI totals.
 */
export async function dashboardDaily(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<DailyRow[]> {
  const w = params.window;
  return rows<DailyRow>(
    db,
    sql`
    with days as (
      select d::date as day from generate_series(${w.from}::date, ${w.to}::date, interval '1 day') as d
    ),
    ev as (
      select
        (e.event_datetime at time zone ${w.timezone})::date as day,
        count(*) filter (where e.event_type = 'lead') as leads,
        count(*) filter (where e.event_type = 'application') as applications,
        count(*) filter (where e.event_type = 'booking') as bookings,
        count(*) filter (where e.event_type = 'no_show') as no_shows,
        count(*) filter (where e.counted) as sales,
        sum(e.group_revenue) filter (where e.counted) as revenue
      from events e
      where e.account_id = ${accountId}
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
      group by 1
    ),
    meetings as (
      select b.booking_date as day, count(*) as meetings
      from events b
      where b.account_id = ${accountId} and b.event_type = 'booking' and b.cancelled_at is null
        and b.booking_date between ${w.from}::date and ${w.to}::date
      group by 1
    ),
    spend as (
      select s.spend_date as day, sum(s.spend) as spend
      from ad_spend_daily s
      where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
      group by 1
    )
    select
      to_char(days.day, 'YYYY-MM-DD') as report_date,
      coalesce(ev.leads, 0)::int as leads,
      coalesce(ev.applications, 0)::int as applications,
      coalesce(ev.bookings, 0)::int as bookings,
      coalesce(meetings.meetings, 0)::int as meetings,
      coalesce(ev.no_shows, 0)::int as no_shows,
      coalesce(ev.sales, 0)::int as sales,
      round(coalesce(ev.revenue, 0), 2)::float8 as revenue,
      round(coalesce(spend.spend, 0), 2)::float8 as spend
    from days
    left join ev on ev.day = days.day
    left join meetings on meetings.day = days.day
    left join spend on spend.day = days.day
    order by days.day`,
  );
}
