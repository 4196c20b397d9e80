import { type SQL, sql } from "drizzle-orm";

/**
 * Attribution's look-back (DESIGN §6): a touch counts for a conversion when it happened at most
 * this long before it (and not after it). The same bound is used for the ad of record's fallback,
 * first touch, last touch and assists, so that Σ out_sales_ft = Σ out_sales_lt = Σ out_sales.
 */
export const LOOKBACK = sql`interval '365 days'`;

/**
 * `left join lateral … as lt`: for a conversion row aliased `c` (with `resolved_ad_id`,
 * `contact_id`, `event_datetime`), the contact's last ad touch at or before it within the
 * look-back, only when the event did not resolve an ad itself. An ad touch is any touchpoint of the
 * contact (web visit or conversion) whose ad resolved: an email, bio-link or organic touch carries
 * no resolved ad and can never be chosen (SPEC tracking rule 7). Ties at the same instant: the
 * larger touchpoint id. Uses touchpoints_contact_idx (account_id, contact_id, occurred_at).
 */
export function lastAdTouchJoin(accountId: string): SQL {
  return sql`left join lateral (
      select tp.resolved_platform, tp.resolved_ad_id
      from touchpoints tp
      where c.resolved_ad_id is null and c.contact_id is not null
        and tp.account_id = ${accountId} and tp.contact_id = c.contact_id
        and tp.occurred_at <= c.event_datetime and tp.occurred_at >= c.event_datetime - ${LOOKBACK}
        and tp.resolved_ad_id is not null
      order by tp.occurred_at desc, tp.id desc
      limit 1
    ) lt on true`;
}

/** The ad of record's platform and id of a row `c` joined with `lastAdTouchJoin`. */
export const adOfRecordColumns = sql`
  case when c.resolved_ad_id is not null then c.resolved_platform else lt.resolved_platform end as ad_platform,
  coalesce(c.resolved_ad_id, lt.resolved_ad_id) as ad_id`;
