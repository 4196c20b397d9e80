import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Marks the account's never-relayed creative needs among `ids` as relayed now (`notified_at`); the
 * status is left as it is. Answers how many were marked: a replay marks none.
 */
export async function ackCreativeRequests(
  db: Sql,
  accountId: string,
  params: { ids: readonly string[]; now: Date },
): Promise<number> {
  const [row] = await rows<{ updated: number }>(
    db,
    sql`
    with marked as (
      update creative_requests
      set notified_at = ${params.now.toISOString()}::timestamptz
      where account_id = ${accountId} and notified_at is null
        and id = any(array(select jsonb_array_elements_text(${JSON.stringify(params.ids)}::jsonb))::uuid[])
      returning 1
    )
    select count(*)::int as updated from marked`,
  );
  return row?.updated ?? 0;
}
