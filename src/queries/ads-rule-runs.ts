import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";

export interface AdRuleRunRow {
  account_id: string;
  id: string;
  rule_id: string;
  ran_at: string;
  dry_run: boolean;
  status: string;
  actions: unknown[];
  summary: string | null;
  metrics: unknown;
}

/**
 * The latest `limit` runs of one rule of the account, newest first. A rule of another account or
 * an unknown id gives no rows: the account filter comes first, so nothing tells the two apart.
 */
export async function adsRuleRuns(db: Sql, accountId: string, params: { ruleId: string; limit: number }) {
  const found = await rows<AdRuleRunRow>(
    db,
    sql`
    select
      x.account_id,
      x.id::text as id,
      x.rule_id::text as rule_id,
      ${isoMs(sql`x.ran_at`)} as ran_at,
      x.dry_run,
      x.status,
      x.actions,
      x.summary,
      x.metrics
    from ad_rule_runs x
    where x.account_id = ${accountId} and x.rule_id = ${params.ruleId}::uuid
    order by x.ran_at desc, x.id desc
    limit ${params.limit}`,
  );
  return ownedRows(found);
}
