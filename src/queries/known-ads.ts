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
    { prepare: true },
  );
}

/**
 * The version of the account's ad catalog (migration 0039): moved on, in the writing transaction, by
 * every statement that writes its ads. Equal versions, equal `knownAds`. An account whose ads were
 * never written since that migration has none: "0".
 */
export async function adCatalogVersion(db: Sql, accountId: string): Promise<string> {
  const found = await rows<{ version: string }>(
    db,
    sql`select version::text as version from ad_catalog_versions where account_id = ${accountId}`,
    { prepare: true },
  );
  return found[0]?.version ?? "0";
}
