import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface AdCampaignRow {
  account_id: string;
  campaign_id: string | null;
  campaign_name: string | null;
  platform: string;
  total_spend: number;
  total_clicks: number;
  total_impressions: number;
  total_reach: number;
  nb_ads: number;
  nb_adsets: number;
}

/**
 * One row per campaign and platform with spend on the window's days (docs/metrics.md "Ads"), by
 * spend descending. A campaign is its platform and `campaign_id`; ads without a campaign id are
 * grouped by their campaign name. `nb_ads` / `nb_adsets`: distinct ads / ad sets with a spend row in
 * the window. Media counts summed as float8 (see ads-spend.ts).
 */
export async function adsCampaigns(db: Sql, accountId: string, params: { window: ReportWindow }) {
  const w = params.window;
  const found = await rows<AdCampaignRow>(
    db,
    sql`
    select
      s.account_id,
      a.campaign_id,
      max(a.campaign_name) as campaign_name,
      s.platform,
      round(sum(s.spend), 2)::float8 as total_spend,
      sum(s.clicks)::float8 as total_clicks,
      sum(s.impressions)::float8 as total_impressions,
      sum(s.reach)::float8 as total_reach,
      count(distinct s.ad_id)::int as nb_ads,
      count(distinct a.adset_id)::int as nb_adsets
    from ad_spend_daily s
    join ads a on a.account_id = s.account_id and a.platform = s.platform and a.ad_id = s.ad_id
    where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
    group by s.account_id, s.platform, a.campaign_id, case when a.campaign_id is null then a.campaign_name end
    order by sum(s.spend) desc, s.platform, a.campaign_id nulls last, max(a.campaign_name) nulls last`,
  );
  return ownedRows(found);
}
