import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export const BREAKDOWN_DIMENSIONS = ["source", "campaign", "product", "rep"] as const;
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

export interface BreakdownRow {
  dimension_key: string | null;
  leads: number;
  applications: number;
  bookings: number;
  shows: number;
  no_shows: number;
  sales: number;
  revenue: number;
}

/**
 * The dashboard's counts split by one dimension of each event (docs/metrics.md "Breakdowns"):
 * `source` = its utm_source (after enrichment); `campaign` = the campaign of its resolved ad, else
 * its campaign_name, else utm_campaign; `product` = product_name, else product_key; `rep` =
 * assigned_user_name. Events without a value form the row whose dimension_key is null, so the rows
 * add up to the KPI totals. Sorted by revenue, then leads, descending.
 */
export async function dashboardBreakdown(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; dim: BreakdownDimension; now: Date },
): Promise<BreakdownRow[]> {
  const w = params.window;
  // The dimension is one of four fixed expressions chosen here, never text from the request.
  const key = {
    source: sql`nullif(btrim(e.utm_source), '')`,
    campaign: sql`coalesce(a.campaign_name, nullif(btrim(e.campaign_name), ''), nullif(btrim(e.utm_campaign), ''))`,
    product: sql`coalesce(nullif(btrim(e.product_name), ''), nullif(btrim(e.product_key), ''))`,
    rep: sql`nullif(btrim(e.assigned_user_name), '')`,
  }[params.dim];
  return rows<BreakdownRow>(
    db,
    sql`
    with tagged as (
      select ${key} as dimension_key, e.event_type, e.counted, e.group_revenue, e.booking_date,
             e.booking_time, e.cancelled_at,
             e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
               as in_window
      from events e
      left join ads a
        on a.account_id = e.account_id and a.platform = e.resolved_platform and a.ad_id = e.resolved_ad_id
      where e.account_id = ${accountId}
        and (
          (e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz)
          or (e.event_type = 'booking' and e.booking_date between ${w.from}::date and ${w.to}::date)
        )
    ),
    grouped as (
      select
        dimension_key,
        count(*) filter (where in_window and event_type = 'lead') as leads,
        count(*) filter (where in_window and event_type = 'application') as applications,
        count(*) filter (where in_window and event_type = 'booking') as bookings,
        count(*) filter (where in_window and event_type = 'no_show') as no_shows,
        count(*) filter (
          where event_type = 'booking' and cancelled_at is null
            and booking_date between ${w.from}::date and ${w.to}::date
            and (booking_date + coalesce(booking_time, '00:00')::time) at time zone ${w.timezone}
                <= ${params.now.toISOString()}::timestamptz
        ) as past_meetings,
        count(*) filter (where in_window and counted) as sales,
        coalesce(sum(group_revenue) filter (where in_window and counted), 0) as revenue
      from tagged
      group by dimension_key
    )
    select
      dimension_key,
      leads::int as leads,
      applications::int as applications,
      bookings::int as bookings,
      greatest(past_meetings - no_shows, 0)::int as shows,
      no_shows::int as no_shows,
      sales::int as sales,
      round(revenue, 2)::float8 as revenue
    from grouped
    where leads + applications + bookings + no_shows + past_meetings + sales > 0
    order by revenue desc, leads desc, dimension_key nulls last`,
  );
}
