import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Deletes the account's rule and, by cascade, its runs; false when the account has no such rule. */
export async function deleteAdRule(db: Sql, accountId: string, params: { ruleId: string }): Promise<boolean> {
  const deleted = await rows<{ id: string }>(
    db,
    sql`delete from ad_rules where account_id = ${accountId} and id = ${params.ruleId} returning id`,
  );
  return deleted.length > 0;
}
