import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Deletes the spend rows one connector synced for the days from..to (inclusive), before the days are
 * written again: a day re-synced is replaced, an ad gone from it (its spend refunded to zero, which
 * the vendors omit) disappears. Imported rows and other connectors' rows stay. Returns the count.
 */
export async function deleteSyncedSpend(
  db: Sql,
  accountId: string,
  params: { platform: string; connectorId: string; from: string; to: string },
): Promise<number> {
  const deleted = await rows<{ n: number }>(
    db,
    sql`
      with gone as (
        delete from ad_spend_daily
        where account_id = ${accountId} and platform = ${params.platform}
          and connector_id = ${params.connectorId}::uuid
          and spend_date between ${params.from}::date and ${params.to}::date
        returning 1
      )
      select count(*)::int as n from gone`,
  );
  return deleted[0]?.n ?? 0;
}
