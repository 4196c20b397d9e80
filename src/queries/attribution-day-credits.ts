import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Which stored credit: a model (with its settings), a level and a look-back, in a timezone's days. */
export interface DayCreditKey {
  level: string;
  /** The model and the settings its credit depends on, e.g. `time_decay:7`. */
  model: string;
  lookbackDays: number;
  timezone: string;
}

export interface StoredDayCredit<T> {
  day: string;
  credit: T;
}

/**
 * Whether a stored model result `d` (its level, catalog version and snapshot) still holds: at the
 * campaign level, the ad catalog it was read in is the present one, and no change its snapshot did
 * not see (a transaction still running then, or begun after) is before `bound`.
 */
export function stillHolds(accountId: string, bound: SQL): SQL {
  return sql`(d.level <> 'campaign' or d.catalog_version =
      coalesce((select v.version from ad_catalog_versions v where v.account_id = ${accountId}), 0))
    and not exists (
      select 1 from journey_changes c
      where c.account_id = ${accountId} and c.xid >= pg_snapshot_xmin(d.seen_snapshot)
        and not pg_visible_in_snapshot(c.xid, d.seen_snapshot)
        and c.from_at < ${bound})`;
}

/**
 * The stored credit of the days `from`–`to` that still holds (migration 0040): computed in the
 * account's present timezone, from the present ad catalog when campaigns are credited, less than an
 * hour ago, and with no change its snapshot did not see (a transaction still running then, or
 * begun after) before the day's end. The end is taken three hours late so a day whose midnight a clock change moves is never
 * judged by a bound too early. The rows found are stamped with this statement's snapshot: what was
 * checked need not be checked again, and a row read often stays in use.
 */
export async function freshDayCredits<T>(
  db: Sql,
  accountId: string,
  params: DayCreditKey & { from: string; to: string },
): Promise<StoredDayCredit<T>[]> {
  return rows<StoredDayCredit<T>>(
    db,
    sql`
    with fresh as (
      select d.day from attribution_day_credits d
      where d.account_id = ${accountId} and d.level = ${params.level} and d.model = ${params.model}
        and d.lookback_days = ${params.lookbackDays} and d.day between ${params.from}::date and ${params.to}::date
        and d.timezone = ${params.timezone} and d.computed_at > now() - interval '1 hour'
        and ${stillHolds(accountId, sql`((d.day + 1)::timestamp at time zone d.timezone) + interval '3 hours'`)}
    )
    update attribution_day_credits d
    set seen_snapshot = pg_current_snapshot(), computed_at = now()
    from fresh f
    where d.account_id = ${accountId} and d.level = ${params.level} and d.model = ${params.model}
      and d.lookback_days = ${params.lookbackDays} and d.day = f.day
    returning d.day::text as day, d.credit`,
  );
}
