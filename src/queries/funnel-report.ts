import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
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
    from_stage: string;
    to_stage: string;
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
 * The cohort funnel (docs/metrics.md "Funnel"): contacts whose first lead in the window opens the
 * cohort; each is followed to now through application, booking, show and counted sale (events at or
 * after that lead). A contact counts in every stage up to the furthest it reached, so counts never
 * increase down the stages.
 */
export async function funnelReport(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<Funnel> {
  const w = params.window;
  const now = params.now.toISOString();
  const [row] = await rows<Row>(
    db,
    sql`
    with cohort as (
      select distinct on (e.contact_id)
        e.contact_id, e.event_datetime as lead_at, e.utm_source as source,
        coalesce(e.utm_campaign, e.campaign_name) as campaign
      from events e
      where e.account_id = ${accountId} and e.event_type = 'lead' and e.contact_id is not null
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
      order by e.contact_id, e.event_datetime, e.id
    ),
    reached as (
      select c.*, ap.application_at, bk.booking_at, sh.show_at, sa.sale_at, sa.product_key, sa.product_name
      from cohort c
      left join lateral (
        select min(a.event_datetime) as application_at from events a
        where a.account_id = ${accountId} and a.contact_id = c.contact_id and a.event_type = 'application'
          and a.event_datetime >= c.lead_at
      ) ap on true
      left join lateral (
        select min(b.event_datetime) as booking_at from events b
        where b.account_id = ${accountId} and b.contact_id = c.contact_id and b.event_type = 'booking'
          and b.event_datetime >= c.lead_at
      ) bk on true
      left join lateral (
        -- shows = past meetings − no-shows, per contact: the show is the meeting after as many past
        -- meetings as the contact has no-shows
        select m.starts_at as show_at
        from (
          select b.booking_date,
                 (b.booking_date + coalesce(b.booking_time, '00:00')::time) at time zone ${w.timezone} as starts_at
          from events b
          where b.account_id = ${accountId} and b.contact_id = c.contact_id and b.event_type = 'booking'
            and b.cancelled_at is null and b.booking_date is not null and b.event_datetime >= c.lead_at
        ) m
        where m.booking_date < ${w.today}::date
        order by m.starts_at
        offset (
          select count(*) from events n
          where n.account_id = ${accountId} and n.contact_id = c.contact_id and n.event_type = 'no_show'
            and n.event_datetime >= c.lead_at
        )
        limit 1
      ) sh on true
      left join lateral (
        select s.event_datetime as sale_at, s.product_key, s.product_name from events s
        where s.account_id = ${accountId} and s.contact_id = c.contact_id and s.counted
          and s.event_datetime >= c.lead_at
        order by s.event_datetime, s.id
        limit 1
      ) sa on true
    ),
    depth as (
      select r.*,
        case when r.sale_at is not null then 5 when r.show_at is not null then 4
             when r.booking_at is not null then 3 when r.application_at is not null then 2 else 1 end as depth
      from reached r
    ),
    totals as (
      select
        count(*) as c1,
        count(*) filter (where depth >= 2) as c2,
        count(*) filter (where depth >= 3) as c3,
        count(*) filter (where depth >= 4) as c4,
        count(*) filter (where depth >= 5) as c5
      from depth
    ),
    steps as (
      select * from (values
        (1, 'lead', 'application'), (2, 'application', 'booking'), (3, 'booking', 'show'), (4, 'show', 'sale')
      ) v(step, from_stage, to_stage)
    ),
    gaps as (
      select s.step, extract(epoch from case s.step
          when 1 then d.application_at - d.lead_at
          when 2 then d.booking_at - d.application_at
          when 3 then d.show_at - d.booking_at
          else d.sale_at - d.show_at end) / 86400.0 as days
      from steps s cross join depth d
    ),
    medians as (
      select s.step, s.from_stage, s.to_stage,
        percentile_cont(0.5) within group (order by g.days) filter (where g.days >= 0) as median_days,
        count(g.days) filter (where g.days >= 0) as sample_size
      from steps s left join gaps g on g.step = s.step
      group by s.step, s.from_stage, s.to_stage
    )
    select
      ${w.from} as "from",
      ${w.to} as "to",
      t.c1::int as c1, t.c2::int as c2, t.c3::int as c3, t.c4::int as c4, t.c5::int as c5,
      round(t.c5::numeric / nullif(t.c1, 0), 4)::float8 as overall_conversion,
      (select coalesce(json_agg(json_build_object(
          'source', g.source, 'leads', g.leads, 'applications', g.applications, 'bookings', g.bookings,
          'shows', g.shows, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(g.leads, 0), 4)::float8
        ) order by g.leads desc, g.source asc nulls last), '[]'::json)
        from (
          select source, count(*)::int as leads, (count(*) filter (where depth >= 2))::int as applications,
            (count(*) filter (where depth >= 3))::int as bookings, (count(*) filter (where depth >= 4))::int as shows,
            (count(*) filter (where depth >= 5))::int as sales
          from depth group by source
        ) g) as by_source,
      (select coalesce(json_agg(json_build_object(
          'campaign', g.campaign, 'leads', g.leads, 'applications', g.applications, 'bookings', g.bookings,
          'shows', g.shows, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(g.leads, 0), 4)::float8
        ) order by g.leads desc, g.campaign asc nulls last), '[]'::json)
        from (
          select campaign, count(*)::int as leads, (count(*) filter (where depth >= 2))::int as applications,
            (count(*) filter (where depth >= 3))::int as bookings, (count(*) filter (where depth >= 4))::int as shows,
            (count(*) filter (where depth >= 5))::int as sales
          from depth group by campaign
        ) g) as by_campaign,
      (select coalesce(json_agg(json_build_object(
          'product_key', g.product_key, 'product_name', g.product_name, 'sales', g.sales,
          'conversion', round(g.sales::numeric / nullif(t.c1, 0), 4)::float8
        ) order by g.sales desc, g.product_key asc nulls last), '[]'::json)
        from (
          select product_key, max(product_name) as product_name, count(*)::int as sales
          from depth where sale_at is not null group by product_key
        ) g) as by_product,
      (select json_agg(json_build_object(
          'from_stage', m.from_stage, 'to_stage', m.to_stage,
          'median_days', round(m.median_days::numeric, 1)::float8, 'sample_size', m.sample_size::int
        ) order by m.step)
        from medians m) as time_to_conversion
    from totals t`,
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
