import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface RepRow {
  rep_name: string | null;
  bookings: number;
  meetings: number;
  shows: number;
  no_shows: number;
  sales: number;
  revenue: number;
  close_rate: number | null;
  no_show_rate: number | null;
  ticket_moyen: number | null;
  contacts_met: number;
  contacts_closed: number;
}

/**
 * One row per rep over a window (docs/metrics.md "Sales"): each event counts for the rep named on it
 * (`assigned_user_name`), with the dashboard's definitions; events without a rep make the row whose
 * `rep_name` is null, so the rows add up to the dashboard totals. Reps of the `reps` table without
 * activity get a row of zeros.
 */
export async function salesReps(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<Omit<RepRow & { account_id: string }, "account_id">[]> {
  const w = params.window;
  const result = await rows<RepRow & { account_id: string }>(
    db,
    sql`
    with ev as (
      select e.account_id, e.assigned_user_name as rep_name,
        count(*) filter (where e.event_type = 'booking') as bookings,
        count(*) filter (where e.event_type = 'no_show') as no_shows,
        count(*) filter (where e.counted) as sales,
        coalesce(sum(e.group_revenue) filter (where e.counted), 0) as revenue,
        count(distinct e.contact_id) filter (where e.counted) as contacts_closed
      from events e
      where e.account_id = ${accountId}
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
      group by e.account_id, e.assigned_user_name
    ),
    mt as (
      select b.account_id, b.assigned_user_name as rep_name,
        count(*) as meetings,
        count(*) filter (where b.booking_date < ${w.today}::date) as past,
        count(distinct b.contact_id) filter (where b.booking_date < ${w.today}::date) as contacts_met
      from (
        select m.account_id, m.assigned_user_name, m.contact_id, m.booking_date
        from events m
        where m.account_id = ${accountId} and m.event_type = 'booking' and m.cancelled_at is null
          and m.booking_date between ${w.from}::date and ${w.to}::date
      ) b
      group by b.account_id, b.assigned_user_name
    ),
    named as (
      select r.account_id, r.name as rep_name from reps r where r.account_id = ${accountId}
    ),
    keys as (
      select account_id, rep_name from ev
      union select account_id, rep_name from mt
      union select account_id, rep_name from named
    ),
    base as (
      select k.account_id, k.rep_name,
        coalesce(ev.bookings, 0) as bookings,
        coalesce(mt.meetings, 0) as meetings,
        greatest(coalesce(mt.past, 0) - coalesce(ev.no_shows, 0), 0) as shows,
        coalesce(ev.no_shows, 0) as no_shows,
        coalesce(ev.sales, 0) as sales,
        coalesce(ev.revenue, 0) as revenue,
        coalesce(mt.contacts_met, 0) as contacts_met,
        coalesce(ev.contacts_closed, 0) as contacts_closed
      from keys k
      left join ev on ev.account_id = k.account_id and ev.rep_name is not distinct from k.rep_name
      left join mt on mt.account_id = k.account_id and mt.rep_name is not distinct from k.rep_name
    )
    select
      account_id,
      rep_name,
      bookings::int as bookings,
      meetings::int as meetings,
      shows::int as shows,
      no_shows::int as no_shows,
      sales::int as sales,
      round(revenue, 2)::float8 as revenue,
      round(sales::numeric / nullif(shows, 0), 4)::float8 as close_rate,
      round(no_shows::numeric / nullif(shows + no_shows, 0), 4)::float8 as no_show_rate,
      round(revenue / nullif(sales, 0), 2)::float8 as ticket_moyen,
      contacts_met::int as contacts_met,
      contacts_closed::int as contacts_closed
    from base
    order by revenue desc, sales desc, rep_name asc nulls last`,
  );
  return ownedRows(result);
}
