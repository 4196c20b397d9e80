import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { SpendRow } from "../ingest/spend-row.ts";

/**
 * Upserts the ads named by the rows (names follow the latest file) and their daily spend; a row equal
 * to what is stored writes nothing. Returns how many spend rows were inserted and updated, and how
 * many ads are new or renamed (ad resolution depends on them).
 */
export async function upsertSpend(
  db: Sql,
  accountId: string,
  /** connectorId: the spend connector that synced the rows (null or absent: an import). */
  params: { rows: readonly SpendRow[]; connectorId?: string | null },
): Promise<{ inserted: number; updated: number; adsChanged: number }> {
  const batch = JSON.stringify(params.rows);
  const connectorId = params.connectorId ?? null;
  const ads = await rows<{ n: number }>(
    db,
    sql`
      with latest as (
        select distinct on (platform, ad_id) *
        from jsonb_to_recordset(${batch}::jsonb)
          as r(platform text, ad_id text, ad_name text, campaign_id text, campaign_name text,
               adset_id text, adset_name text, date date)
        order by platform, ad_id, date desc
      ), written as (
        insert into ads (account_id, platform, ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name)
        select ${accountId}, platform, ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name from latest
        on conflict (account_id, platform, ad_id) do update set
          ad_name = excluded.ad_name,
          campaign_id = coalesce(excluded.campaign_id, ads.campaign_id),
          campaign_name = coalesce(excluded.campaign_name, ads.campaign_name),
          adset_id = coalesce(excluded.adset_id, ads.adset_id),
          adset_name = coalesce(excluded.adset_name, ads.adset_name),
          updated_at = now()
        where (ads.ad_name, ads.campaign_id, ads.campaign_name, ads.adset_id, ads.adset_name)
          is distinct from (excluded.ad_name, coalesce(excluded.campaign_id, ads.campaign_id),
                            coalesce(excluded.campaign_name, ads.campaign_name),
                            coalesce(excluded.adset_id, ads.adset_id), coalesce(excluded.adset_name, ads.adset_name))
        returning 1
      )
      select count(*)::int as n from written`,
  );
  const spend = await rows<{ inserted: boolean }>(
    db,
    sql`
      insert into ad_spend_daily (account_id, platform, ad_id, spend_date, spend, clicks, impressions, reach, currency,
                                  connector_id)
      select ${accountId}, platform, ad_id, date, total_spend, coalesce(total_clicks, 0),
             coalesce(total_impressions, 0), coalesce(total_reach, 0), currency, ${connectorId}::uuid
      from jsonb_to_recordset(${batch}::jsonb)
        as r(platform text, ad_id text, date date, total_spend numeric, total_clicks int,
             total_impressions int, total_reach int, currency text)
      on conflict (account_id, platform, ad_id, spend_date) do update set
        spend = excluded.spend, clicks = excluded.clicks, impressions = excluded.impressions,
        reach = excluded.reach, currency = excluded.currency, connector_id = excluded.connector_id,
        updated_at = now()
      where (ad_spend_daily.spend, ad_spend_daily.clicks, ad_spend_daily.impressions, ad_spend_daily.reach,
             ad_spend_daily.currency, ad_spend_daily.connector_id)
        is distinct from (excluded.spend, excluded.clicks, excluded.impressions, excluded.reach, excluded.currency,
                          excluded.connector_id)
      returning (xmax = 0) as inserted`,
  );
  const inserted = spend.filter((r) => r.inserted).length;
  return { inserted, updated: spend.length - inserted, adsChanged: ads[0]?.n ?? 0 };
}
