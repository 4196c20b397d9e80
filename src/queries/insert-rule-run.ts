import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Records one evaluation of a rule and stamps the rule's last run; answers the run's id. */
export async function insertRuleRun(
  db: Sql,
  accountId: string,
  params: {
    ruleId: string;
    ranAt: Date;
    dryRun: boolean;
    status: "ok" | "error";
    actions: readonly unknown[];
    summary: string;
    metrics: unknown;
  },
): Promise<string> {
  const [run] = await rows<{ id: string }>(
    db,
    sql`
    with run as (
      insert into ad_rule_runs (account_id, id, rule_id, ran_at, dry_run, status, actions, summary, metrics)
      values (${accountId}, gen_random_uuid(), ${params.ruleId}, ${params.ranAt.toISOString()}::timestamptz,
              ${params.dryRun}, ${params.status}, ${JSON.stringify(params.actions)}::jsonb, ${params.summary},
              ${JSON.stringify(params.metrics)}::jsonb)
      returning id::text as id
    ), stamped as (
      update ad_rules set last_run_at = ${params.ranAt.toISOString()}::timestamptz
      where account_id = ${accountId} and id = ${params.ruleId}
    )
    select id from run`,
  );
  if (!run) throw new Error("no run recorded");
  return run.id;
}
