import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

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
 *
 * Every count and sum comes from the daily rollup's `total` rows (as GET /dashboard/kpis: events by
 * their day, meetings and cancelled meetings by their booking day), a few dozen rows whatever the
 * volume; open applications from contact_milestones.
 */
export async function salesSummary(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<SalesSummary> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  const [row] = await rows<Flat>(
    db,
    sql`
    with r as (
      select
        coalesce(sum(r.leads), 0) as leads,
        coalesce(sum(r.applications), 0) as applications,
        coalesce(sum(r.bookings), 0) as bookings,
        coalesce(sum(r.no_shows), 0) as no_shows,
        coalesce(sum(r.sales_lost), 0) as sales_lost,
        coalesce(sum(r.sales), 0) as sales,
        coalesce(sum(r.revenue), 0) as revenue,
        coalesce(sum(r.refunds), 0) as refunds,
        coalesce(sum(r.disputes), 0) as disputes,
        coalesce(sum(r.meetings), 0) as meetings,
        coalesce(sum(r.meetings) filter (where r.day < ${w.today}::date), 0) as past,
        coalesce(sum(r.cancelled_meetings), 0) as cancelled
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'total'
        and r.day between ${w.from}::date and ${w.to}::date
    ),
    -- Open applications: contacts whose latest application falls in the window with no booking at
    -- or after it (index-only on contact_milestones_application_idx).
    unbooked as (
      select count(*) as applications_without_booking
      from contact_milestones m
      where m.account_id = ${accountId}
        and m.last_application_at >= ${w.start}::timestamptz and m.last_application_at < ${w.end}::timestamptz
        and (m.last_booking_at is null or m.last_booking_at < m.last_application_at)
    ),
    base as (
      select r.*, greatest(r.past - r.no_shows, 0) as shows, unbooked.applications_without_booking
      from r, unbooked
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
