import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface SalesPipeline {
  leads: number;
  applications: number;
  bookings: number;
  meetings: number;
  meetings_past: number;
  meetings_upcoming: number;
  meetings_cancelled: number;
  shows: number;
  applications_without_booking: number;
}

export interface SalesSummary {
  from: string;
  to: string;
  sales: number;
  revenue: number;
  ticket_moyen: number | null;
  refund_amount: number;
  dispute_amount: number;
  net_revenue: number;
  sales_lost: number;
  close_rate: number | null;
  pipeline: SalesPipeline;
  no_shows: number;
  no_show_rate: number | null;
}

type Flat = Omit<SalesSummary, "pipeline"> & { [K in keyof SalesPipeline as `p_${K}`]: number };

/**
 * The sales summary over a window (docs/metrics.md "Sales"): the dashboard's definitions of sales,
 * revenue, meetings, shows and no-shows, plus lost sales and the booking pipeline.
 */
export async function salesSummary(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<SalesSummary> {
  const w = params.window;
  const [row] = await rows<Flat>(
    db,
    sql`
    with ev as (
      select
        count(*) filter (where e.event_type = 'lead') as leads,
        count(*) filter (where e.event_type = 'application') as applications,
        count(*) filter (where e.event_type = 'booking') as bookings,
        count(*) filter (where e.event_type = 'no_show') as no_shows,
        count(*) filter (where e.event_type = 'sale_lost') as sales_lost,
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
        count(*) filter (where b.cancelled_at is null) as meetings,
        count(*) filter (
          where b.cancelled_at is null
            and b.booking_date < ${w.today}::date
        ) as past,
        count(*) filter (where b.cancelled_at is not null) as cancelled
      from events b
      where b.account_id = ${accountId} and b.event_type = 'booking'
        and b.booking_date between ${w.from}::date and ${w.to}::date
    ),
    unbooked as (
      select count(*) as applications_without_booking
      from (
        select a.contact_id, min(a.event_datetime) as applied_at
        from events a
        where a.account_id = ${accountId} and a.event_type = 'application' and a.contact_id is not null
          and a.event_datetime >= ${w.start}::timestamptz and a.event_datetime < ${w.end}::timestamptz
        group by a.contact_id
      ) ap
      where not exists (
        select 1 from events b
        where b.account_id = ${accountId} and b.contact_id = ap.contact_id and b.event_type = 'booking'
          and b.event_datetime >= ap.applied_at
      )
    ),
    base as (
      select ev.*, meetings.meetings, meetings.past, meetings.cancelled,
        greatest(meetings.past - ev.no_shows, 0) as shows, unbooked.applications_without_booking
      from ev, meetings, unbooked
    )
    select
      ${w.from} as "from",
      ${w.to} as "to",
      sales::int as sales,
      round(revenue, 2)::float8 as revenue,
      round(revenue / nullif(sales, 0), 2)::float8 as ticket_moyen,
      round(refunds, 2)::float8 as refund_amount,
      round(disputes, 2)::float8 as dispute_amount,
      round(revenue - refunds - disputes, 2)::float8 as net_revenue,
      sales_lost::int as sales_lost,
      round(sales::numeric / nullif(shows, 0), 4)::float8 as close_rate,
      leads::int as p_leads,
      applications::int as p_applications,
      bookings::int as p_bookings,
      meetings::int as p_meetings,
      past::int as p_meetings_past,
      (meetings - past)::int as p_meetings_upcoming,
      cancelled::int as p_meetings_cancelled,
      shows::int as p_shows,
      applications_without_booking::int as p_applications_without_booking,
      no_shows::int as no_shows,
      round(no_shows::numeric / nullif(shows + no_shows, 0), 4)::float8 as no_show_rate
    from base`,
  );
  if (!row) throw new Error("sales summary: no row");
  return {
    from: row.from,
    to: row.to,
    sales: row.sales,
    revenue: row.revenue,
    ticket_moyen: row.ticket_moyen,
    refund_amount: row.refund_amount,
    dispute_amount: row.dispute_amount,
    net_revenue: row.net_revenue,
    sales_lost: row.sales_lost,
    close_rate: row.close_rate,
    pipeline: {
      leads: row.p_leads,
      applications: row.p_applications,
      bookings: row.p_bookings,
      meetings: row.p_meetings,
      meetings_past: row.p_meetings_past,
      meetings_upcoming: row.p_meetings_upcoming,
      meetings_cancelled: row.p_meetings_cancelled,
      shows: row.p_shows,
      applications_without_booking: row.p_applications_without_booking,
    },
    no_shows: row.no_shows,
    no_show_rate: row.no_show_rate,
  };
}
