import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface AdRuleFlags {
  rule_id: string;
  enabled: boolean;
  dry_run: boolean;
}

/** Sets one or both flags of the account's rule; null when the account has no such rule. */
export async function updateAdRule(
  db: Sql,
  accountId: string,
  params: { ruleId: string; enabled?: boolean; dryRun?: boolean },
): Promise<AdRuleFlags | null> {
  const [row] = await rows<AdRuleFlags>(
    db,
    sql`
    update ad_rules
    set enabled = coalesce(${params.enabled ?? null}::boolean, enabled),
        dry_run = coalesce(${params.dryRun ?? null}::boolean, dry_run),
        updated_at = now()
    where account_id = ${accountId} and id = ${params.ruleId}
    returning id::text as rule_id, enabled, dry_run`,
  );
  return row ?? null;
}
