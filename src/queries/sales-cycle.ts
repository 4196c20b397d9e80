import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface CycleWeek {
  week_start: string;
  conversions: number;
  avg_days: number | null;
}

export interface SalesCycle {
  from: string;
  to: string;
  avg_days: number | null;
  median_days: number | null;
  p25_days: number | null;
  p75_days: number | null;
  sample_size: number;
  conversions: number;
  weekly_trend: CycleWeek[];
}

/**
 * Sales cycle over a window (docs/metrics.md "Sales"): contacts whose first counted sale ever falls in
 * the window; the cycle runs from the contact's first lead at or before that sale (else its first
 * non-sale event before it) to the sale, in days. Percentiles by percentile_cont, 1 decimal.
 * Both instants are kept per contact in contact_milestones (contact_milestones_sale_idx).
 */
export async function salesCycle(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow },
): Promise<SalesCycle> {
  const w = params.window;
  const [row] = await rows<SalesCycle>(
    db,
    sql`
    with cycles as (
      select
        date_trunc('week', m.first_sale_at at time zone ${w.timezone})::date as week,
        date_part('epoch', m.first_sale_at - m.cycle_started_at) / 86400 as days
      from contact_milestones m
      where m.account_id = ${accountId}
        and m.first_sale_at >= ${w.start}::timestamptz and m.first_sale_at < ${w.end}::timestamptz
    ),
    weeks as (
      select generate_series(
        date_trunc('week', ${w.from}::timestamp), date_trunc('week', ${w.to}::timestamp), interval '1 week'
      )::date as week
    ),
    trend as (
      select wk.week, count(c.week) as conversions, avg(c.days) as avg_days
      from weeks wk left join cycles c on c.week = wk.week
      group by wk.week
    )
    select
      ${w.from} as "from",
      ${w.to} as "to",
      round(avg(days)::numeric, 1)::float8 as avg_days,
      round((percentile_cont(0.5) within group (order by days))::numeric, 1)::float8 as median_days,
      round((percentile_cont(0.25) within group (order by days))::numeric, 1)::float8 as p25_days,
      round((percentile_cont(0.75) within group (order by days))::numeric, 1)::float8 as p75_days,
      count(days)::int as sample_size,
      count(*)::int as conversions,
      (select coalesce(json_agg(json_build_object(
          'week_start', to_char(t.week, 'YYYY-MM-DD'),
          'conversions', t.conversions::int,
          'avg_days', round(t.avg_days::numeric, 1)::float8
        ) order by t.week), '[]'::json)
        from trend t) as weekly_trend
    from cycles`,
  );
  if (!row) throw new Error("sales cycle: no row");
  return row;
}
