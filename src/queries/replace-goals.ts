import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

export interface Goal {
  metric_key: string;
  target_value: number;
}

/** Replaces the goals of one monthly period (`period` is the month's first day, YYYY-MM-01). */
export async function replaceGoals(
  db: Sql,
  accountId: string,
  params: { period: string; goals: readonly Goal[] },
): Promise<void> {
  await db.execute(sql`delete from kpi_goals where account_id = ${accountId} and period = ${params.period}`);
  if (params.goals.length === 0) return;
  await db.execute(sql`
    insert into kpi_goals (account_id, period, metric_key, target_value)
    select ${accountId}, ${params.period}::date, g.metric_key, g.target_value
    from jsonb_to_recordset(${JSON.stringify(params.goals)}::jsonb) as g(metric_key text, target_value numeric)`);
}
