import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

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
 * The dashboard's counts split by one dimension of each event (docs/metrics.md "Breakdowns"), from
 * the daily rollup: `source` = utm_source (after enrichment); `campaign` = the campaign of the
 * event's ad of record, else (no ad of record) its campaign_name, else utm_campaign; `product` =
 * product_name, else product_key; `rep` = assigned_user_name. Events without a value form the row
 * whose dimension_key is null, so the rows add up to the KPI totals. Sorted by revenue, then leads,
 * descending, then by key.
 */
export async function dashboardBreakdown(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; dim: BreakdownDimension },
): Promise<BreakdownRow[]> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  // Campaigns of attributed events come from their ad's current campaign (the rollup keeps the ad),
  // the others from the event itself (the rollup's `campaign` rows).
  const keyed =
    params.dim === "campaign"
      ? sql`
        select a.campaign_name as key, r.day, r.leads, r.applications, r.bookings, r.no_shows,
               r.meetings, r.sales, r.revenue
        from report_rollup_daily r
        left join ads a on a.account_id = r.account_id and a.platform || '/' || a.ad_id = r.key
        where r.account_id = ${accountId} and r.dim = 'ad' and r.key <> ''
          and r.day between ${w.from}::date and ${w.to}::date
        union all
        select r.key, r.day, r.leads, r.applications, r.bookings, r.no_shows, r.meetings, r.sales,
               r.revenue
        from report_rollup_daily r
        where r.account_id = ${accountId} and r.dim = 'campaign'
          and r.day between ${w.from}::date and ${w.to}::date`
      : sql`
        select r.key, r.day, r.leads, r.applications, r.bookings, r.no_shows, r.meetings, r.sales,
               r.revenue
        from report_rollup_daily r
        where r.account_id = ${accountId} and r.dim = ${params.dim}
          and r.day between ${w.from}::date and ${w.to}::date`;
  return rows<BreakdownRow>(
    db,
    sql`
    with keyed (dimension_key, day, leads, applications, bookings, no_shows, meetings, sales, revenue)
      as (${keyed}),
    grouped as (
      select
        nullif(dimension_key, '') as dimension_key,
        sum(leads) as leads,
        sum(applications) as applications,
        sum(bookings) as bookings,
        sum(no_shows) as no_shows,
        coalesce(sum(meetings) filter (where day < ${w.today}::date), 0) as past_meetings,
        sum(sales) as sales,
        sum(revenue) as revenue
      from keyed
      group by 1
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
