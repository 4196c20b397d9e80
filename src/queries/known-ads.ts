import { sql } from "drizzle-orm";
import type { KnownAd } from "../attribution/ad-resolution.ts";
import { rows, type Sql } from "../db/client.ts";

/** Every ad of the account, for building the ad resolution index. */
export function knownAds(db: Sql, accountId: string): Promise<KnownAd[]> {
  return rows<KnownAd>(
    db,
    sql`
      select ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name, platform
      from ads
      where account_id = ${accountId} and not is_excluded
      order by platform, ad_id`,
  );
}

/**
 * A digest of exactly what `knownAds` returns: equal digests, equal ad index. One row whatever the
 * catalog's size, so checking a cached index costs a scan of the account's ads but no transfer and no
 * rebuild. Each ad is hashed as a row value, where NULL and '' differ.
 */
export async function knownAdsDigest(db: Sql, accountId: string): Promise<string> {
  const found = await rows<{ digest: string | null }>(
    db,
    sql`
      select md5(string_agg(row(ad_id, ad_name, campaign_id, campaign_name, adset_id, adset_name, platform)::text,
                            e'\n' order by platform, ad_id)) as digest
      from ads
      where account_id = ${accountId} and not is_excluded`,
  );
  return found[0]?.digest ?? "";
}
