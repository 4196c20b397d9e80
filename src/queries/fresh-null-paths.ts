import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { stillHolds } from "./attribution-day-credits.ts";
import type { CreditLevel, UnconvertedPathRow } from "./attribution-journeys.ts";

/** Which stored paths to null: a level, a look-back and the window's instants. */
export interface NullPathsKey {
  level: CreditLevel;
  lookbackDays: number;
  /** The window's first instant, ISO 8601. */
  start: string;
  /** The instant after its last day. */
  end: string;
}

/**
 * Paths as stored (attribution_null_paths.paths): each key once, a path as its count of contacts
 * then its keys' places. At scale 100, 14,261 paths: 0.37 MB, where the paths themselves are 4.6 MB
 * of JSON as jsonb writes it, whose reading and parsing cost more than the fit.
 */
export interface StoredPaths {
  keys: string[];
  paths: number[][];
}

export function storedPaths(paths: readonly UnconvertedPathRow[]): StoredPaths {
  const keys: string[] = [];
  const place = new Map<string, number>();
  const placeOf = (key: string) => {
    let at = place.get(key);
    if (at === undefined) {
      at = keys.length;
      keys.push(key);
      place.set(key, at);
    }
    return at;
  };
  return { keys, paths: paths.map((p) => [p.contacts, ...p.keys.map(placeOf)]) };
}

function unstoredPaths(stored: StoredPaths): UnconvertedPathRow[] {
  return stored.paths.map(([contacts, ...places]) => ({
    keys: places.map((at) => stored.keys[at] as string),
    contacts: contacts as number,
  }));
}

/**
 * The window's stored Markov paths to null if they still hold (migration 0043), by the rule of the
 * stored day credits (freshDayCredits): the same ad catalog at the campaign level, computed or
 * checked less than an hour ago, and no change its snapshot did not see before the window's end.
 * Found, the row is stamped with this statement's snapshot. Null: none stored, or stale.
 */
export async function freshNullPaths(
  db: Sql,
  accountId: string,
  key: NullPathsKey,
): Promise<UnconvertedPathRow[] | null> {
  const [found] = await rows<{ paths: StoredPaths }>(
    db,
    sql`
    update attribution_null_paths d
    set seen_snapshot = pg_current_snapshot(), computed_at = now()
    where d.account_id = ${accountId} and d.level = ${key.level} and d.lookback_days = ${key.lookbackDays}
      and d.window_start = ${key.start}::timestamptz and d.window_end = ${key.end}::timestamptz
      and d.computed_at > now() - interval '1 hour' and ${stillHolds(accountId, sql`d.window_end`)}
    returning d.paths`,
  );
  return found ? unstoredPaths(found.paths) : null;
}
