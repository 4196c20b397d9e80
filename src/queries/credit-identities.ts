import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";

/** An ad or a campaign as the models' rows name it, with its spend in the window. */
export interface CreditIdentityRow {
  account_id: string;
  key: string;
  platform: string;
  ad_id: string | null;
  ad_name: string | null;
  campaign_id: string | null;
  campaign_name: string | null;
  spend: number;
}

/**
 * The ads (`level` ad) or campaigns (`level` campaign) credited (`keys`) or spending in the window, keyed as
 * attribution-journeys.ts keys touches (`platform/ad_id`, `platform/campaign_id`), with the spend of
 * the window's days. A campaign's name is the one its ads carry (the latest updated, when they
 * disagree).
 */
export async function creditIdentities(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; level: "ad" | "campaign"; keys: readonly string[] },
): Promise<Omit<CreditIdentityRow, "account_id">[]> {
  const w = params.window;
  const keys = JSON.stringify(params.keys);
  if (params.level === "ad") {
    const found = await rows<CreditIdentityRow>(
      db,
      sql`
      select ad.account_id, ad.platform || '/' || ad.ad_id as key, ad.platform, ad.ad_id, ad.ad_name, ad.campaign_id, ad.campaign_name,
        coalesce((select sum(sd.spend) from ad_spend_daily sd
                  where sd.account_id = ${accountId} and sd.platform = ad.platform and sd.ad_id = ad.ad_id
                    and sd.spend_date between ${w.from}::date and ${w.to}::date), 0)::float8 as spend
      from ads ad
      where ad.account_id = ${accountId}
        and (ad.platform || '/' || ad.ad_id in (select jsonb_array_elements_text(${keys}::jsonb))
          or exists (select 1 from ad_spend_daily sd
                     where sd.account_id = ${accountId} and sd.platform = ad.platform and sd.ad_id = ad.ad_id
                       and sd.spend_date between ${w.from}::date and ${w.to}::date and sd.spend <> 0))`,
    );
    return ownedRows(found);
  }
  const found = await rows<CreditIdentityRow>(
    db,
    sql`
    with wanted as (select jsonb_array_elements_text(${keys}::jsonb) as key),
    named as (
      select distinct on (ad.platform, coalesce(ad.campaign_id, ''))
        ad.account_id, ad.platform || '/' || coalesce(ad.campaign_id, '') as key, ad.platform, ad.campaign_id, ad.campaign_name
      from ads ad
      where ad.account_id = ${accountId}
      order by ad.platform, coalesce(ad.campaign_id, ''), ad.updated_at desc
    )
    select * from (
    select n.account_id, n.key, n.platform, null::text as ad_id, null::text as ad_name, n.campaign_id, n.campaign_name,
      coalesce((select sum(sd.spend) from ad_spend_daily sd
                join ads ad on ad.account_id = sd.account_id and ad.platform = sd.platform and ad.ad_id = sd.ad_id
                where sd.account_id = ${accountId} and ad.platform = n.platform
                  and coalesce(ad.campaign_id, '') = coalesce(n.campaign_id, '')
                  and sd.spend_date between ${w.from}::date and ${w.to}::date), 0)::float8 as spend
    from named n) c
    where c.key in (select key from wanted) or c.spend <> 0`,
  );
  return ownedRows(found);
}
