import { sql } from "drizzle-orm";
import { rows, type Sql, sessionSetting } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export const FUNNEL_STAGES = ["lead", "application", "booking", "show", "sale"] as const;

export interface FunnelStage {
  stage: (typeof FUNNEL_STAGES)[number];
  count: number;
  /** count / previous stage's count; null for the first stage or a zero divisor. */
  conversion: number | null;
}

interface StageCounts {
  leads: number;
  applications: number;
  bookings: number;
  shows: number;
  sales: number;
  conversion: number | null;
}

export interface Funnel {
  from: string;
  to: string;
  stages: FunnelStage[];
  overall_conversion: number | null;
  by_source: (StageCounts & { source: string | null })[];
  by_campaign: (StageCounts & { campaign: string | null })[];
  by_product: {
    product_key: string | null;
    product_name: string | null;
    sales: number;
    conversion: number | null;
  }[];
  time_to_conversion: {
    from_stage: (typeof FUNNEL_STAGES)[number];
    to_stage: (typeof FUNNEL_STAGES)[number];
    median_days: number | null;
    sample_size: number;
  }[];
}

interface Row extends Omit<Funnel, "stages"> {
  c1: number;
  c2: number;
  c3: number;
  c4: number;
  c5: number;
}

/**
 * The cohort funnel (docs/metrics.md "Funnel"): contacts whose first lead ever falls in the window
 * make the cohort; each is followed to now through application, booking, show and counted sale
 * (events at or after that lead). A contact counts in every stage up to the furthest it reached, so
 * counts never increase down the stages. Reads contact_milestones (contact_milestones_cohort_idx),
 * one index entry per cohort contact.
 */
export async function funnelReport(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<Funnel> {
  const w = params.window;
  // The cohort's sort and hashes stay in memory.
  await sessionSetting(db, "work_mem", "32MB");
  const [row] = await rows<Row>(
    db,
    sql`
    -- the cohort: one row per contact whose first lead falls in the window, index-only
    -- (contact_milestones_cohort_idx; kept by the events trigger, migration 0008). Its stage and the
    -- days between stages are stored; only the show waits for its meeting's day to be over.
    with depth as (
      select m.lead_source as source, m.lead_campaign as campaign, m.sale_product_key as product_key,
        m.sale_product_name as product_name,
        case when m.stage = 5 then 5 when m.show_day < ${w.today}::date then 4 else m.stage end as depth,
        m.lead_to_application as d1, m.application_to_booking as d2,
        case when m.show_day < ${w.today}::date then m.booking_to_show end as d3,
        case when m.show_day < ${w.today}::date then m.show_to_sale end as d4
      from contact_milestones m
      where m.account_id = ${accountId}
        and m.first_lead_at >= ${w.start}::timestamptz and m.first_lead_at < ${w.end}::timestamptz
    ),
    -- stage counts per source, campaign and sale product (a few hundred rows), from which the totals
    -- and each breakdown are summed
    parts as (
      select source, campaign, product_key, max(product_name) as product_name,
        count(*) as leads,
        count(*) filter (where depth >= 2) as applications,
        count(*) filter (where depth >= 3) as bookings,
        count(*) filter (where depth >= 4) as shows,
        count(*) filter (where depth >= 5) as sales
      from depth
      group by source, campaign, product_key
    ),
    groups as (
      select grouping(source, campaign, product_key) as set_id, source, campaign, product_key,
        max(product_name) as product_name, sum(leads) as leads, sum(applications) as applications,
        sum(bookings) as bookings, sum(shows) as shows, sum(sales) as sales
      from parts
      group by grouping sets ((), (source), (campaign), (product_key))
    ),
    medians as (
      select m.*
      from (
        select
          percentile_cont(0.5) within group (order by d1) as m1, count(d1) as n1,
          percentile_cont(0.5) within group (order by d2) as m2, count(d2) as n2,
          percentile_cont(0.5) within group (order by d3) as m3, count(d3) as n3,
          percentile_cont(0.5) within group (order by d4) as m4, count(d4) as n4
        from depth
      ) g
      cross join lateral (values
        (1, 'lead', 'application', g.m1, g.n1), (2, 'application', 'booking', g.m2, g.n2),
        (3, 'booking', 'show', g.m3, g.n3), (4, 'show', 'sale', g.m4, g.n4)
      ) m(step, from_stage, to_stage, median_days, sample_size)
    ),
    -- grouping() bits: source 4, campaign 2, product_key 1 (1 = not grouped by it)
    totals as (select * from groups where set_id = 7)
    select
      ${w.from} as "from",
      ${w.to} as "to",
      coalesce(t.leads, 0)::int as c1, coalesce(t.applications, 0)::int as c2,
      coalesce(t.bookings, 0)::int as c3, coalesce(t.shows, 0)::int as c4, coalesce(t.sales, 0)::int as c5,
      round(t.sales::numeric / nullif(t.leads, 0), 4)::float8 as overall_conversion,
      (select coalesce(json_agg(json_build_object(
          'source', g.source, 'leads', g.leads, 'applications', g.applications, 'bookings', g.bookings,
          'shows', g.shows, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(g.leads, 0), 4)::float8
        ) order by g.leads desc, g.source asc nulls last), '[]'::json)
        from groups g where g.set_id = 3) as by_source,
      (select coalesce(json_agg(json_build_object(
          'campaign', g.campaign, 'leads', g.leads, 'applications', g.applications, 'bookings', g.bookings,
          'shows', g.shows, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(g.leads, 0), 4)::float8
        ) order by g.leads desc, g.campaign asc nulls last), '[]'::json)
        from groups g where g.set_id = 5) as by_campaign,
      (select coalesce(json_agg(json_build_object(
          'product_key', g.product_key, 'product_name', g.product_name, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(t.leads, 0), 4)::float8
        ) order by g.sales desc, g.product_key asc nulls last), '[]'::json)
        from groups g where g.set_id = 6 and g.sales > 0) as by_product,
      (select json_agg(json_build_object(
          'from_stage', m.from_stage, 'to_stage', m.to_stage,
          'median_days', round(m.median_days::numeric, 1)::float8, 'sample_size', m.sample_size::int
        ) order by m.step)
        from medians m) as time_to_conversion
    from (select 1) one left join totals t on true`,
  );
  if (!row) throw new Error("funnel: no row");
  const counts = [row.c1, row.c2, row.c3, row.c4, row.c5];
  const rate = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 10_000) / 10_000);
  return {
    from: row.from,
    to: row.to,
    stages: FUNNEL_STAGES.map((stage, i) => ({
      stage,
      count: counts[i] ?? 0,
      conversion: i === 0 ? null : rate(counts[i] ?? 0, counts[i - 1] ?? 0),
    })),
    overall_conversion: row.overall_conversion,
    by_source: row.by_source,
    by_campaign: row.by_campaign,
    by_product: row.by_product,
    time_to_conversion: row.time_to_conversion,
  };
}
