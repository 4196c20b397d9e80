import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";

export interface AdRuleRow {
  account_id: string;
  id: string;
  label: string;
  rule_type: string;
  platform: string | null;
  campaign_id: string | null;
  campaign_name: string | null;
  enabled: boolean;
  dry_run: boolean;
  params: Record<string, unknown>;
  last_run_at: string | null;
  last_run_status: string | null;
  last_run_dry_run: boolean | null;
  created_at: string;
  updated_at: string;
}

/**
 * The account's ad rules, oldest first (docs/metrics.md "Ads"). The last run is the rule's latest
 * recorded run (ad_rule_runs); without one, `last_run_at` falls back to the rule's own stamp and
 * the status is null.
 */
export async function adsRules(db: Sql, accountId: string) {
  const found = await rows<AdRuleRow>(
    db,
    sql`
    select
      r.account_id,
      r.id::text as id,
      r.label,
      r.rule_type,
      r.platform,
      r.campaign_id,
      r.campaign_name,
      r.enabled,
      r.dry_run,
      r.params,
      ${isoMs(sql`coalesce(run.ran_at, r.last_run_at)`)} as last_run_at,
      run.status as last_run_status,
      run.dry_run as last_run_dry_run,
      ${isoMs(sql`r.created_at`)} as created_at,
      ${isoMs(sql`r.updated_at`)} as updated_at
    from ad_rules r
    left join lateral (
      select x.ran_at, x.status, x.dry_run
      from ad_rule_runs x
      where x.account_id = r.account_id and x.rule_id = r.id
      order by x.ran_at desc, x.id desc
      limit 1
    ) run on true
    where r.account_id = ${accountId}
    order by r.created_at, r.id`,
  );
  return ownedRows(found);
}
