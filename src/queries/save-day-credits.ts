import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { DayCreditKey, StoredDayCredit } from "./attribution-day-credits.ts";
import type { JourneysSeen } from "./attribution-journeys.ts";

/**
 * Stores days' credit with what it was computed from (see freshDayCredits), then drops the
 * account's stored days no request has read for a week.
 */
export async function saveDayCredits<T>(
  db: Sql,
  accountId: string,
  params: DayCreditKey & { seen: JourneysSeen; days: readonly StoredDayCredit<T>[] },
): Promise<void> {
  if (params.days.length === 0) return;
  const seen = params.seen;
  await rows(
    db,
    sql`
    insert into attribution_day_credits as d
      (account_id, level, model, lookback_days, day, timezone, catalog_version, seen_snapshot, computed_at, credit)
    select ${accountId}, ${params.level}, ${params.model}, ${params.lookbackDays}, x.day, ${params.timezone},
      ${seen.catalog_version}, ${seen.seen_snapshot}::pg_snapshot, ${seen.computed_at}::timestamptz, x.credit
    from jsonb_to_recordset(${JSON.stringify(params.days)}::jsonb) as x(day date, credit jsonb)
    on conflict (account_id, level, model, lookback_days, day) do update set
      timezone = excluded.timezone, catalog_version = excluded.catalog_version, seen_snapshot = excluded.seen_snapshot,
      computed_at = excluded.computed_at, credit = excluded.credit`,
  );
  await rows(
    db,
    sql`delete from attribution_day_credits
        where account_id = ${accountId} and computed_at < now() - interval '7 days'`,
  );
}
