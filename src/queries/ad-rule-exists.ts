import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Whether a rule with this id exists in any account (migration 0016): the one fact that tells another
 * account's rule (403) from no rule at all (404). Nothing else of the rule leaves its account.
 */
export async function adRuleExists(db: Sql, params: { ruleId: string }): Promise<boolean> {
  const [row] = await rows<{ found: boolean }>(
    db,
    sql`select ascribe_ad_rule_exists(${params.ruleId}::uuid) as found`,
  );
  return row?.found === true;
}
