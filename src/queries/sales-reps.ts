import { sql } from "drizzle-orm";
import { rows, type Sql, sessionSetting } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";

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
 * (`assigned_user_name`, trimmed), with the dashboard's definitions; events without a rep (or with a
 * blank name) make the row whose `rep_name` is null, so the rows add up to the dashboard totals.
 * Reps of the `reps` table without activity get a row of zeros.
 *
 * Counts, sales, revenue and meetings come from the daily rollup's `rep` rows (key = the trimmed
 * name, '' for none), as the dashboard's rep breakdown. Only the per-contact figures are read from
 * events, index-only: contacts_closed from the window's counted sales (events_counted_cover_idx),
 * contacts_met from the window's past meetings (events_meetings_cover_idx), each distinct (rep,
 * contact) pair once.
 */
export async function salesReps(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<Omit<RepRow & { account_id: string }, "account_id">[]> {
  const w = params.window;
  await foldReportRollup(db, accountId);
  // The per-contact counts below take each (rep, contact) pair once, tens of thousands of index
  // entries over 30 days at scale 100. Without account_id statistics (embedded-maintenance.ts) the
  // planner takes an account for 1/200 of the table and sorts them; hashed, the embedded database
  // answers in half the time (PGlite, scale 100, 30 days: 243–357 → 150–172 ms).
  await sessionSetting(db, "enable_sort", "off");
  const result = await rows<RepRow & { account_id: string }>(
    db,
    sql`
    with ru as (
      select r.account_id, nullif(r.key, '') as rep_name,
        sum(r.bookings) as bookings,
        sum(r.no_shows) as no_shows,
        sum(r.sales) as sales,
        sum(r.revenue) as revenue,
        sum(r.meetings) as meetings,
        coalesce(sum(r.meetings) filter (where r.day < ${w.today}::date), 0) as past,
        bool_or((r.leads, r.applications, r.bookings, r.no_shows, r.cancels, r.cancelled_bookings,
          r.sales_lost, r.sales, r.revenue, r.refunds, r.disputes, r.meetings)
          is distinct from (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) as active
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'rep'
        and r.day between ${w.from}::date and ${w.to}::date
      group by r.account_id, 2
    ),
    closed as (
      select account_id, rep_name, count(*) as contacts_closed
      from (
        select distinct e.account_id, nullif(btrim(e.assigned_user_name), '') as rep_name, e.contact_id
        from events e
        where e.account_id = ${accountId} and e.counted
          and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
      ) d
      group by account_id, rep_name
    ),
    met as (
      select account_id, rep_name, count(*) as contacts_met
      from (
        select distinct b.account_id, nullif(btrim(b.assigned_user_name), '') as rep_name, b.contact_id
        from events b
        where b.account_id = ${accountId} and b.event_type = 'booking' and b.cancelled_at is null
          and b.booking_date between ${w.from}::date and ${w.to}::date
          and b.booking_date < ${w.today}::date
      ) d
      group by account_id, rep_name
    ),
    keys as (
      select account_id, rep_name from ru where active
      union select account_id, rep_name from closed
      union select account_id, rep_name from met
      union select n.account_id, nullif(btrim(n.name), '') from reps n where n.account_id = ${accountId}
    ),
    base as (
      select k.account_id, k.rep_name,
        coalesce(ru.bookings, 0) as bookings,
        coalesce(ru.meetings, 0) as meetings,
        greatest(coalesce(ru.past, 0) - coalesce(ru.no_shows, 0), 0) as shows,
        coalesce(ru.no_shows, 0) as no_shows,
        coalesce(ru.sales, 0) as sales,
        coalesce(ru.revenue, 0) as revenue,
        coalesce(met.contacts_met, 0) as contacts_met,
        coalesce(closed.contacts_closed, 0) as contacts_closed
      from keys k
      left join ru on ru.account_id = k.account_id and ru.rep_name is not distinct from k.rep_name
      left join met on met.account_id = k.account_id and met.rep_name is not distinct from k.rep_name
      left join closed on closed.account_id = k.account_id and closed.rep_name is not distinct from k.rep_name
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
