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
