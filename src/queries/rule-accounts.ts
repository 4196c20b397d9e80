import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** The accounts with at least one enabled ad rule (migration 0018); administration only. */
export async function ruleAccounts(db: Sql): Promise<string[]> {
  const found = await rows<{ id: string }>(db, sql`select ascribe_rule_accounts()::text as id`);
  return found.map((r) => r.id);
}
