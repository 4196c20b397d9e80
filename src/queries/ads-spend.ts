import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface AdSpendRow {
  account_id: string;
  ad_id: string;
  ad_name: string;
  campaign_name: string | null;
  campaign_id: string | null;
  adset_name: string | null;
  adset_id: string | null;
  platform: string;
  total_spend: number;
  total_clicks: number;
  total_impressions: number;
  total_reach: number;
}

/**
 * One row per ad and platform with at least one spend row on the window's days (docs/metrics.md
 * "Ads"): its spend, clicks, impressions and reach summed over those days, with the ad's current
 * names. Excluded ads included, so the rows add up to the dashboard's spend. Media counts are
 * summed as float8: exact integers up to 2^53, where a sum over many days could overflow int4.
 */
export async function adsSpend(db: Sql, accountId: string, params: { window: ReportWindow }) {
  const w = params.window;
  const found = await rows<AdSpendRow>(
    db,
    sql`
    select
      s.account_id,
      s.ad_id,
      a.ad_name,
      a.campaign_name,
      a.campaign_id,
      a.adset_name,
      a.adset_id,
      s.platform,
      round(sum(s.spend), 2)::float8 as total_spend,
      sum(s.clicks)::float8 as total_clicks,
      sum(s.impressions)::float8 as total_impressions,
      sum(s.reach)::float8 as total_reach
    from ad_spend_daily s
    join ads a on a.account_id = s.account_id and a.platform = s.platform and a.ad_id = s.ad_id
    where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
    group by s.account_id, s.platform, s.ad_id, a.ad_name, a.campaign_name, a.campaign_id, a.adset_name, a.adset_id
    order by sum(s.spend) desc, s.platform, s.ad_id`,
  );
  return ownedRows(found);
}
