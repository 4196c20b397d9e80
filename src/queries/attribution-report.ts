import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface AttributionReportRow {
  account_id: string;
  out_source: string;
  out_campaign: string | null;
  out_ad_id: string | null;
  out_ad_name: string | null;
  out_spend: number;
  out_gross_revenue: number;
  out_refund_amount: number;
  out_dispute_amount: number;
  out_net_revenue: number;
  out_roi_gross: number | null;
  out_roi_net: number | null;
  out_touchpoints: number;
}

/**
 * The attribution report (docs/metrics.md "Attribution"): one row per ad with spend, sales or
 * touchpoints in the window — its source is the most frequent source (`utm.source`, else `channel`)
 * of its web touchpoints in the window (ties: alphabetical), else its platform; its campaign the ad's campaign name — plus,
 * for what no ad was credited, one row per source and campaign (`out_ad_id` null). Each counted sale
 * of the window sits in exactly one row (its ad of record, else its own utm_source / utm_campaign),
 * each spend row in its ad's row, each touchpoint of the window in one row: the report adds up to the
 * dashboard's revenue, refunds, disputes and spend. Sorted by spend, then gross revenue, descending.
 *
 * Sales and touchpoints come from the rollups (after a fold), spend from ad_spend_daily: nothing
 * scans the window's events or touchpoints.
 */
export async function attributionReport(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<Omit<AttributionReportRow, "account_id">[]> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  const found = await rows<AttributionReportRow>(
    db,
    sql`
    -- counted sales of the window from the rollup: per ad of record, and for those without one per
    -- source and campaign (dimension 'unattributed', key [source, campaign])
    with ad_sales as (
      select account_id, split_part(key, '/', 1) as platform,
             substr(key, length(split_part(key, '/', 1)) + 2) as ad_id,
             sum(revenue) as revenue, sum(refunds) as refunds, sum(disputes) as disputes
      from report_rollup_daily
      where account_id = ${accountId} and dim = 'ad' and key <> ''
        and day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
      having sum(sales) <> 0
    ),
    other_sales as (
      select account_id, (key::jsonb)->>0 as source, (key::jsonb)->>1 as campaign,
             sum(revenue) as revenue, sum(refunds) as refunds, sum(disputes) as disputes
      from report_rollup_daily
      where account_id = ${accountId} and dim = 'unattributed'
        and day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
      having sum(sales) <> 0
    ),
    -- the window's touchpoints from the rollup (one row per day, kind, ad, source and campaign)
    tps as (
      select account_id, nullif(platform, '') as platform, nullif(ad_id, '') as ad_id, kind, source,
             nullif(campaign, '') as campaign, sum(touchpoints) as touchpoints
      from touchpoint_rollup_daily
      where account_id = ${accountId} and day between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3, 4, 5, 6
      having sum(touchpoints) <> 0
    ),
    sp as (
      select account_id, platform, ad_id, sum(spend) as spend
      from ad_spend_daily
      where account_id = ${accountId} and spend_date between ${w.from}::date and ${w.to}::date
      group by 1, 2, 3
    ),
    -- an ad's source: the most frequent source of its web touchpoints (ties: alphabetical)
    ad_source as (
      select distinct on (platform, ad_id) platform, ad_id, source
      from tps
      where ad_id is not null and kind = 'web' and source <> '(none)'
      group by platform, ad_id, source
      order by platform, ad_id, sum(touchpoints) desc, source
    ),
    ad_tps as (
      select t.account_id, t.platform, t.ad_id, sum(t.touchpoints) as touchpoints, min(s.source) as source
      from tps t
      left join ad_source s on s.platform = t.platform and s.ad_id = t.ad_id
      where t.ad_id is not null group by 1, 2, 3
    ),
    ad_keys as (
      select account_id, platform, ad_id from sp
      union select account_id, platform, ad_id from ad_sales
      union select account_id, platform, ad_id from ad_tps
    ),
    ad_rows as (
      select k.account_id, coalesce(t.source, k.platform) as source,
             coalesce(a.campaign_name, a.campaign_id) as campaign, k.ad_id, a.ad_name,
             coalesce(sp.spend, 0) as spend, coalesce(s.revenue, 0) as revenue,
             coalesce(s.refunds, 0) as refunds, coalesce(s.disputes, 0) as disputes,
             coalesce(t.touchpoints, 0) as touchpoints
      from ad_keys k
      left join ads a on a.account_id = ${accountId} and a.platform = k.platform and a.ad_id = k.ad_id
      left join sp on sp.platform = k.platform and sp.ad_id = k.ad_id
      left join ad_sales s on s.platform = k.platform and s.ad_id = k.ad_id
      left join ad_tps t on t.platform = k.platform and t.ad_id = k.ad_id
    ),
    other as (
      select account_id, source, campaign, revenue, refunds, disputes, 0 as touchpoints
      from other_sales
      union all
      select account_id, source, campaign, 0, 0, 0, touchpoints from tps where ad_id is null
    ),
    other_rows as (
      select account_id, source, campaign, null::text as ad_id, null::text as ad_name, 0 as spend,
             sum(revenue) as revenue, sum(refunds) as refunds, sum(disputes) as disputes,
             sum(touchpoints) as touchpoints
      from other group by 1, 2, 3
    ),
    report as (select * from ad_rows union all select * from other_rows)
    select
      account_id,
      source as out_source,
      campaign as out_campaign,
      ad_id as out_ad_id,
      ad_name as out_ad_name,
      round(spend, 2)::float8 as out_spend,
      round(revenue, 2)::float8 as out_gross_revenue,
      round(refunds, 2)::float8 as out_refund_amount,
      round(disputes, 2)::float8 as out_dispute_amount,
      round(revenue - refunds - disputes, 2)::float8 as out_net_revenue,
      round((revenue - spend) / nullif(spend, 0), 4)::float8 as out_roi_gross,
      round((revenue - refunds - disputes - spend) / nullif(spend, 0), 4)::float8 as out_roi_net,
      touchpoints::int as out_touchpoints
    from report
    order by spend desc, revenue desc, source, campaign nulls first, ad_id nulls first`,
  );
  return ownedRows(found);
}
