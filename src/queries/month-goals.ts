import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface GoalRow {
  metric_key: string;
  target_value: number;
}

/** The goals of one monthly period (`period`: the month's first day, YYYY-MM-01), by metric. */
export async function monthGoals(db: Sql, accountId: string, params: { period: string }): Promise<GoalRow[]> {
  return rows<GoalRow>(
    db,
    sql`
      select g.metric_key, g.target_value::float8 as target_value
      from kpi_goals g
      where g.account_id = ${accountId} and g.period = ${params.period}::date
      order by g.metric_key`,
    { prepare: true },
  );
}
