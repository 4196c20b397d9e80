import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";

export interface EnabledRuleRow {
  account_id: string;
  id: string;
  label: string;
  rule_type: string;
  platform: string | null;
  campaign_id: string | null;
  dry_run: boolean;
  params: unknown;
  /** Targets (`action:platform:id`) this rule already acted on today (in the account's timezone). */
  done_today: string[];
}

/** The account's enabled rules (all, or one), oldest first, each with what it already did today. */
export async function enabledRules(db: Sql, accountId: string, params: { since: Date; ruleId?: string }) {
  const found = await rows<EnabledRuleRow>(
    db,
    sql`
    select r.account_id, r.id::text as id, r.label, r.rule_type, r.platform, r.campaign_id, r.dry_run, r.params,
      coalesce((
        select array_agg(distinct a->>'target')
        from ad_rule_runs x, jsonb_array_elements(x.actions) a
        where x.account_id = r.account_id and x.rule_id = r.id and not x.dry_run
          and x.ran_at >= ${params.since.toISOString()}::timestamptz and a->>'status' = 'done'
      ), '{}') as done_today
    from ad_rules r
    where r.account_id = ${accountId} and r.enabled
      ${params.ruleId ? sql`and r.id = ${params.ruleId}` : sql``}
    order by r.created_at, r.id`,
  );
  return ownedRows(found);
}
