import { sql } from "drizzle-orm";

/**
 * Attribution's look-back (DESIGN §6): a touch counts for a conversion when it happened at most
 * this long before it (and not after it). The same bound is used for the ad of record's fallback
 * (`ascribe_last_ad_touch`, migration 0006: keep the two equal), first touch, last touch and
 * assists, so that Σ out_sales_ft = Σ out_sales_lt = Σ out_sales.
 */
export const LOOKBACK = sql`interval '365 days'`;
