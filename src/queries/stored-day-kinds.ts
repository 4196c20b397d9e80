import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface StoredDayKind {
  level: string;
  model: string;
  lookback_days: number;
  last_day: string;
}

/** What the account's stored day credits were computed for, each with its latest day. */
export async function storedDayKinds(db: Sql, accountId: string): Promise<StoredDayKind[]> {
  return rows<StoredDayKind>(
    db,
    sql`select level, model, lookback_days, max(day)::text as last_day
        from attribution_day_credits where account_id = ${accountId}
        group by level, model, lookback_days order by level, model, lookback_days`,
  );
}
