import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { markOwner } from "../http/barrier.ts";

/** The account's ICP criteria object; `{}` until criteria are set. */
export async function icpCriteria(db: Sql, accountId: string): Promise<Record<string, unknown>> {
  const found = await rows<{ account_id: string; criteria: Record<string, unknown> }>(
    db,
    sql`select account_id, criteria from icp_criteria where account_id = ${accountId}`,
    { prepare: true },
  );
  const row = found[0];
  if (!row) return {};
  return markOwner(row.criteria, row.account_id);
}
