import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface AttributionRow {
  account_id: string;
  out_ad_id: string;
  out_ad_name: string | null;
  out_campaign_id: string | null;
  out_campaign_name: string | null;
  out_adset_id: string | null;
  out_adset_name: string | null;
  out_platform: string;
  out_total_spend: number;
  out_total_clicks: number;
  out_total_impressions: number;
  out_total_reach: number;
  out_leads: number;
  out_applications: number;
  out_bookings: number;
  out_meetings: number;
  out_meetings_present: number;
  out_meetings_no_show: number;
  out_sales: number;
  out_revenue: number;
  out_show_rate: number | null;
  out_close_rate: number | null;
  out_rep_names: string[];
  out_sales_ft: number;
  out_revenue_ft: number;
  out_sales_lt: number;
  out_revenue_lt: number;
  out_sales_assisted: number;
  out_revenue_assisted: number;
  out_refund_amount: number;
  out_dispute_amount: number;
  out_net_revenue: number;
  out_is_excluded: boolean;
}

/**
 * One row per ad with spend or any result in the window (docs/attribution.md, docs/metrics.md
 * "Attribution"), all from the daily rollup: results go to each conversion's ad of record
 * (`ad`, `ad_rep` rows), which is also the sale's last touch; first-touch and assisted credit of
 * each counted sale to the first and the other distinct ads the contact touched in the 365 days up
 * to it (`ad_ft`, `ad_assist` rows). The database keeps all three on the events (migration 0006).
 * Sorted by spend, then revenue, descending; then platform and ad id.
 */
export async function attributionRows(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<Omit<AttributionRow, "account_id">[]> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  const found = await rows<AttributionRow>(
    db,
    sql`
    with res as (
      select r.account_id, split_part(r.key, '/', 1) as platform, substr(r.key, strpos(r.key, '/') + 1) as ad_id,
        sum(r.leads) as leads, sum(r.applications) as applications, sum(r.bookings) as bookings,
        sum(r.no_shows) as no_shows, sum(r.meetings) as meetings,
        coalesce(sum(r.meetings) filter (where r.day < ${w.today}::date), 0) as past,
        sum(r.sales) as sales, sum(r.revenue) as revenue, sum(r.refunds) as refunds,
        sum(r.disputes) as disputes
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'ad' and r.key <> ''
        and r.day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
    ),
    reps as (
      select split_part(r.key, chr(31), 1) as ad_key,
        array_agg(distinct split_part(r.key, chr(31), 2) order by split_part(r.key, chr(31), 2)) as rep_names
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'ad_rep'
        and r.day between ${w.from}::date and ${w.to}::date
        and r.leads + r.applications + r.bookings + r.no_shows + r.cancels + r.cancelled_bookings
            + r.sales_lost + r.sales > 0
      group by 1
    ),
    -- first-touch and assisted credit of the window's counted sales (stored on each sale event,
    -- rolled up by ad); last touch is the ad of record, i.e. the results above
    cr as (
      select r.account_id, split_part(r.key, '/', 1) as platform, substr(r.key, strpos(r.key, '/') + 1) as ad_id,
        coalesce(sum(r.sales) filter (where r.dim = 'ad_ft'), 0) as sales_ft,
        coalesce(sum(r.revenue) filter (where r.dim = 'ad_ft'), 0) as revenue_ft,
        coalesce(sum(r.sales) filter (where r.dim = 'ad_assist'), 0) as sales_assisted,
        coalesce(sum(r.revenue) filter (where r.dim = 'ad_assist'), 0) as revenue_assisted
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim in ('ad_ft', 'ad_assist')
        and r.day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
      having sum(r.sales) > 0
    ),
    sp as (
      select account_id, platform, ad_id, sum(spend) as spend, sum(clicks) as clicks,
             sum(impressions) as impressions, sum(reach) as reach
      from ad_spend_daily
      where account_id = ${accountId} and spend_date between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
    ),
    keys as (
      select account_id, platform, ad_id from sp
      union select account_id, platform, ad_id from res
      union select account_id, platform, ad_id from cr
    )
    select
      k.account_id,
      k.ad_id as out_ad_id,
      a.ad_name as out_ad_name,
      a.campaign_id as out_campaign_id,
      a.campaign_name as out_campaign_name,
      a.adset_id as out_adset_id,
      a.adset_name as out_adset_name,
      k.platform as out_platform,
      round(coalesce(sp.spend, 0), 2)::float8 as out_total_spend,
      coalesce(sp.clicks, 0)::int as out_total_clicks,
      coalesce(sp.impressions, 0)::int as out_total_impressions,
      coalesce(sp.reach, 0)::int as out_total_reach,
      coalesce(res.leads, 0)::int as out_leads,
      coalesce(res.applications, 0)::int as out_applications,
      coalesce(res.bookings, 0)::int as out_bookings,
      coalesce(res.meetings, 0)::int as out_meetings,
      greatest(coalesce(res.past, 0) - coalesce(res.no_shows, 0), 0)::int as out_meetings_present,
      coalesce(res.no_shows, 0)::int as out_meetings_no_show,
      coalesce(res.sales, 0)::int as out_sales,
      round(coalesce(res.revenue, 0), 2)::float8 as out_revenue,
      round(greatest(coalesce(res.past, 0) - coalesce(res.no_shows, 0), 0)::numeric
        / nullif(greatest(coalesce(res.past, 0) - coalesce(res.no_shows, 0), 0) + coalesce(res.no_shows, 0), 0), 4)::float8
        as out_show_rate,
      round(coalesce(res.sales, 0)::numeric
        / nullif(greatest(coalesce(res.past, 0) - coalesce(res.no_shows, 0), 0), 0), 4)::float8 as out_close_rate,
      to_jsonb(coalesce(reps.rep_names, '{}'::text[])) as out_rep_names,
      coalesce(cr.sales_ft, 0)::int as out_sales_ft,
      round(coalesce(cr.revenue_ft, 0), 2)::float8 as out_revenue_ft,
      coalesce(res.sales, 0)::int as out_sales_lt,
      round(coalesce(res.revenue, 0), 2)::float8 as out_revenue_lt,
      coalesce(cr.sales_assisted, 0)::int as out_sales_assisted,
      round(coalesce(cr.revenue_assisted, 0), 2)::float8 as out_revenue_assisted,
      round(coalesce(res.refunds, 0), 2)::float8 as out_refund_amount,
      round(coalesce(res.disputes, 0), 2)::float8 as out_dispute_amount,
      round(coalesce(res.revenue, 0) - coalesce(res.refunds, 0) - coalesce(res.disputes, 0), 2)::float8
        as out_net_revenue,
      coalesce(a.is_excluded, false) as out_is_excluded
    from keys k
    left join ads a on a.account_id = ${accountId} and a.platform = k.platform and a.ad_id = k.ad_id
    left join sp on sp.platform = k.platform and sp.ad_id = k.ad_id
    left join res on res.platform = k.platform and res.ad_id = k.ad_id
    left join cr on cr.platform = k.platform and cr.ad_id = k.ad_id
    left join reps on reps.ad_key = k.platform || '/' || k.ad_id
    order by coalesce(sp.spend, 0) desc, coalesce(res.revenue, 0) desc, k.platform, k.ad_id`,
  );
  return ownedRows(found);
}
