import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

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
 * The KPI object over a window (docs/metrics.md "Dashboard"). Counts by event date; meetings by
 * booking date; sales are counted purchases, their revenue, refunds and disputes those of the
 * purchase; spend by spend date. Money rounded to cents, rates to 4 decimals, x/0 → null.
 */
export async function dashboardKpis(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<DashboardKpis> {
  const w = params.window;
  const [row] = await rows<DashboardKpis>(
    db,
    sql`
    with ev as (
      select
        count(*) filter (where e.event_type = 'lead') as leads,
        count(*) filter (where e.event_type = 'application') as applications,
        count(*) filter (where e.event_type = 'booking') as bookings,
        count(*) filter (where e.event_type = 'no_show') as no_shows,
        count(*) filter (where e.counted) as sales,
        coalesce(sum(e.group_revenue) filter (where e.counted), 0) as revenue,
        coalesce(sum(e.group_refunds) filter (where e.counted), 0) as refunds,
        coalesce(sum(e.group_disputes) filter (where e.counted), 0) as disputes
      from events e
      where e.account_id = ${accountId}
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
    ),
    meetings as (
      select
        count(*) as meetings,
        count(*) filter (
          where (b.booking_date + coalesce(b.booking_time, '00:00')::time) at time zone ${w.timezone}
                <= ${params.now.toISOString()}::timestamptz
        ) as past
      from events b
      where b.account_id = ${accountId} and b.event_type = 'booking' and b.cancelled_at is null
        and b.booking_date between ${w.from}::date and ${w.to}::date
    ),
    spend as (
      select coalesce(sum(s.spend), 0) as spend
      from ad_spend_daily s
      where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
    ),
    base as (
      select ev.*, meetings.meetings, greatest(meetings.past - ev.no_shows, 0) as shows, spend.spend
      from ev, meetings, spend
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
