import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface EventSummaryRow {
  platform: string | null;
  ad_id: string | null;
  ad_name: string | null;
  campaign_name: string | null;
  leads: number;
  applications: number;
  bookings: number;
  sales: number;
  no_shows: number;
  cancellations: number;
  total_value: number;
}

/**
 * CRM results of the window per ad and campaign (docs/metrics.md "Events"), by event date, from the
 * daily rollup. An event goes to its ad of record (its own resolved ad, else the contact's last ad
 * touch; the campaign is the ad's); one without an ad of record to the row of ad null and the
 * campaign it names (`campaign_name`, else `utm_campaign`; null when neither). Sales are counted
 * purchases, placed with their opening event's ad; `total_value` is their revenue. Rows with
 * nothing to count are left out. Aggregates over the account's rows: no owner tag needed.
 */
export async function eventsSummary(db: Sql, accountId: string, params: { window: ReportWindow }) {
  const w = params.window;
  await foldReportRollup(db, accountId);
  return rows<EventSummaryRow>(
    db,
    sql`
    with r as (
      select
        case when r.dim = 'ad' then split_part(r.key, '/', 1) end as platform,
        case when r.dim = 'ad' then substr(r.key, strpos(r.key, '/') + 1) end as ad_id,
        case when r.dim = 'campaign' then nullif(r.key, '') end as unattributed_campaign,
        sum(r.leads) as leads, sum(r.applications) as applications, sum(r.bookings) as bookings,
        sum(r.sales) as sales, sum(r.no_shows) as no_shows,
        sum(r.cancels + r.cancelled_bookings) as cancellations, sum(r.revenue) as revenue
      from report_rollup_daily r
      where r.account_id = ${accountId}
        and ((r.dim = 'ad' and r.key <> '') or r.dim = 'campaign')
        and r.day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
    )
    select
      r.platform,
      r.ad_id,
      a.ad_name,
      case when r.ad_id is null then r.unattributed_campaign else a.campaign_name end as campaign_name,
      r.leads::int as leads,
      r.applications::int as applications,
      r.bookings::int as bookings,
      r.sales::int as sales,
      r.no_shows::int as no_shows,
      r.cancellations::int as cancellations,
      round(r.revenue, 2)::float8 as total_value
    from r
    left join ads a on a.account_id = ${accountId} and a.platform = r.platform and a.ad_id = r.ad_id
    where r.leads + r.applications + r.bookings + r.sales + r.no_shows + r.cancellations > 0
    order by total_value desc, sales desc, leads desc, a.ad_name nulls last, campaign_name nulls last,
      r.platform, r.ad_id`,
  );
}
