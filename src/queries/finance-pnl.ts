import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

export interface PnlFigures {
  revenue: number;
  refunds: number;
  disputes: number;
  net_revenue: number;
  ad_spend: number;
  commissions: number;
  result: number;
}

export interface PnlMonth extends PnlFigures {
  /** Calendar month in the account's timezone, YYYY-MM (clipped to the window). */
  month: string;
}

export interface Pnl extends PnlFigures {
  from: string;
  to: string;
  by_month: PnlMonth[];
}

/**
 * The P&L over a window (docs/metrics.md "Finance"): counted purchases' revenue, refunds and disputes
 * on their opening event's date, ad spend by spend date, commissions of commissionable purchases by
 * purchase date (each rounded to cents, so the months add up to the totals exactly); the same per
 * calendar month of the window in the account's timezone. The sales come from the daily rollup's
 * `total` rows, as the dashboard's do (one figure in both places): at scale 100 reading a month's
 * counted events row by row was most of the report's 60 ms.
 */
export async function financePnl(db: Sql, accountId: string, params: { window: ReportWindow }): Promise<Pnl> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  const [row] = await rows<Pnl>(
    db,
    sql`
    with months as (
      select generate_series(
        date_trunc('month', ${w.from}::timestamp), date_trunc('month', ${w.to}::timestamp), interval '1 month'
      )::date as month
    ),
    sales as (
      select date_trunc('month', r.day)::date as month,
        sum(r.revenue) as revenue, sum(r.refunds) as refunds, sum(r.disputes) as disputes
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'total'
        and r.day between ${w.from}::date and ${w.to}::date
      group by 1
    ),
    spend as (
      select date_trunc('month', s.spend_date::timestamp)::date as month, sum(s.spend) as ad_spend
      from ad_spend_daily s
      where s.account_id = ${accountId} and s.spend_date between ${w.from}::date and ${w.to}::date
      group by 1
    ),
    commissions as (
      select date_trunc('month', p.purchase_date at time zone ${w.timezone})::date as month,
        sum(round(coalesce(p.commission_amount, p.amount * p.commission_rate, 0), 2)) as commissions
      from purchases p
      where p.account_id = ${accountId} and p.commissionable
        and p.purchase_date >= ${w.start}::timestamptz and p.purchase_date < ${w.end}::timestamptz
      group by 1
    ),
    monthly as (
      select m.month,
        coalesce(sa.revenue, 0) as revenue, coalesce(sa.refunds, 0) as refunds,
        coalesce(sa.disputes, 0) as disputes, coalesce(sp.ad_spend, 0) as ad_spend,
        coalesce(c.commissions, 0) as commissions
      from months m
      left join sales sa on sa.month = m.month
      left join spend sp on sp.month = m.month
      left join commissions c on c.month = m.month
    ),
    totals as (
      select
        coalesce((select sum(revenue) from sales), 0) as revenue,
        coalesce((select sum(refunds) from sales), 0) as refunds,
        coalesce((select sum(disputes) from sales), 0) as disputes,
        coalesce((select sum(ad_spend) from spend), 0) as ad_spend,
        coalesce((select sum(commissions) from commissions), 0) as commissions
    )
    select
      ${w.from} as "from",
      ${w.to} as "to",
      round(t.revenue, 2)::float8 as revenue,
      round(t.refunds, 2)::float8 as refunds,
      round(t.disputes, 2)::float8 as disputes,
      round(t.revenue - t.refunds - t.disputes, 2)::float8 as net_revenue,
      round(t.ad_spend, 2)::float8 as ad_spend,
      round(t.commissions, 2)::float8 as commissions,
      round(t.revenue - t.refunds - t.disputes - t.ad_spend - t.commissions, 2)::float8 as result,
      (select coalesce(json_agg(json_build_object(
          'month', to_char(m.month, 'YYYY-MM'),
          'revenue', round(m.revenue, 2)::float8,
          'refunds', round(m.refunds, 2)::float8,
          'disputes', round(m.disputes, 2)::float8,
          'net_revenue', round(m.revenue - m.refunds - m.disputes, 2)::float8,
          'ad_spend', round(m.ad_spend, 2)::float8,
          'commissions', round(m.commissions, 2)::float8,
          'result', round(m.revenue - m.refunds - m.disputes - m.ad_spend - m.commissions, 2)::float8
        ) order by m.month), '[]'::json)
        from monthly m) as by_month
    from totals t`,
  );
  if (!row) throw new Error("finance P&L: no row");
  return row;
}
