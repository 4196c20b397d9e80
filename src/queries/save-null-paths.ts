import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { JourneysSeen, UnconvertedPathRow } from "./attribution-journeys.ts";
import { type NullPathsKey, storedPaths } from "./fresh-null-paths.ts";

/**
 * Stores a window's Markov paths to null with what they were read from (see freshNullPaths), then
 * drops the account's stored windows no request has read for a week.
 */
export async function saveNullPaths(
  db: Sql,
  accountId: string,
  params: NullPathsKey & { seen: JourneysSeen; paths: readonly UnconvertedPathRow[] },
): Promise<void> {
  const seen = params.seen;
  await rows(
    db,
    sql`
    insert into attribution_null_paths as d
      (account_id, level, lookback_days, window_start, window_end, catalog_version, seen_snapshot, computed_at, paths)
    values (${accountId}, ${params.level}, ${params.lookbackDays}, ${params.start}::timestamptz,
      ${params.end}::timestamptz, ${seen.catalog_version}, ${seen.seen_snapshot}::pg_snapshot,
      ${seen.computed_at}::timestamptz, ${JSON.stringify(storedPaths(params.paths))}::json)
    on conflict (account_id, level, lookback_days, window_start, window_end) do update set
      catalog_version = excluded.catalog_version, seen_snapshot = excluded.seen_snapshot,
      computed_at = excluded.computed_at, paths = excluded.paths`,
  );
  await rows(
    db,
    sql`delete from attribution_null_paths
        where account_id = ${accountId} and computed_at < now() - interval '7 days'`,
  );
}
