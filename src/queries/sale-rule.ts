import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { DEFAULT_SALE_RULE, type SaleRule, saleRuleSchema } from "../ingest/sale-counting.ts";

/** The account's sale rule, or the default when none was set. */
export async function saleRule(db: Sql, accountId: string): Promise<SaleRule> {
  const found = await rows<{ sale_rule: unknown }>(
    db,
    sql`select sale_rule from account_settings where account_id = ${accountId}`,
    { prepare: true },
  );
  const stored = found[0]?.sale_rule;
  if (stored === null || stored === undefined) return DEFAULT_SALE_RULE;
  // A rule stored by an older version keeps working: missing fields take the default.
  return saleRuleSchema.parse({ ...DEFAULT_SALE_RULE, ...(stored as object) });
}
