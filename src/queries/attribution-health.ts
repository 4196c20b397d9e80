import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";
import { foldReportRollup } from "./fold-report-rollup.ts";
import { isoMs } from "./sql-format.ts";

export interface HealthCounts {
  events_30j: number;
  events_pub_30j: number;
  exact: number;
  by_name: number;
  unresolved: number;
  leads_30j: number;
  leads_without_utm: number;
  /**
   * Events of the 7 days before `now`, counted only when the tracking script sent no page view in
   * them (what the pixel_silent issue reports); 0 otherwise: at scale 100 the count read 126,000
   * events (250 ms on PGlite) for a number nothing showed.
   */
  events_7j: number;
  /** Whether the tracking script sent a page view in the 7 days before `now`. */
  pixel_active_7j: boolean;
  pixel_sessions_30j: number;
  pixel_sessions_with_id: number;
  pixel_derniere_activite: string | null;
}

export interface UnresolvedSignal {
  utm_ad_id: string | null;
  meta_ad_id: string | null;
  utm_content: string | null;
  n: number;
}

/**
 * Capture health counts over a window (the last 30 days) and the 7 days before `now`, plus the
 * distinct ad signals of the window's unresolved events (for macro detection, which is JS: see
 * `isUnresolvedMacro`). An event carries an ad signal when it has a non-blank utm_ad_id, meta_ad_id
 * or utm_content (what ad resolution reads).
 *
 * The window's event and session counts come from the rollup's `total` rows, after a fold (a
 * session counts once per day it is seen on: sessions are split at midnight); the 7-day checks
 * and the last page view are index reads (events_datetime_idx, touchpoints_web_idx); the
 * unresolved signals are the rollup's `unresolved_signal` rows (key: the JSON array of the raw
 * utm_ad_id, meta_ad_id and utm_content).
 */
export async function attributionHealthCounts(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<{ counts: HealthCounts; unresolved: UnresolvedSignal[] }> {
  const w = params.window;
  const now = params.now.toISOString();
  await foldReportRollup(db, accountId);
  const [counts] = await rows<HealthCounts>(
    db,
    sql`
    with ev as (
      select
        coalesce(sum(r.events), 0) as events_30j,
        coalesce(sum(r.signal_events), 0) as events_pub,
        coalesce(sum(r.exact_events), 0) as exact,
        coalesce(sum(r.by_name_events), 0) as by_name,
        coalesce(sum(r.unresolved_events), 0) as unresolved,
        coalesce(sum(r.leads), 0) as leads,
        coalesce(sum(r.leads_without_utm), 0) as leads_without_utm,
        coalesce(sum(r.web_sessions), 0) as sessions,
        coalesce(sum(r.web_sessions_with_id), 0) as sessions_with_id
      from report_rollup_daily r
      where r.account_id = ${accountId} and r.dim = 'total'
        and r.day between ${w.from}::date and ${w.to}::date
    ),
    active as (
      select exists (
        select 1 from touchpoints t
        where t.account_id = ${accountId} and t.kind = 'web'
          and t.occurred_at > ${now}::timestamptz - interval '7 days' and t.occurred_at <= ${now}::timestamptz
      ) as yes
    ),
    ev7 as (
      -- Counted only for a silent pixel: a CASE runs its subquery only in the branch taken.
      select case when (select yes from active) then 0 else (
        select count(*) from events e
        where e.account_id = ${accountId} and e.event_datetime > ${now}::timestamptz - interval '7 days'
          and e.event_datetime <= ${now}::timestamptz
      ) end as n
    ),
    last_web as (
      select max(t.occurred_at) as at from touchpoints t where t.account_id = ${accountId} and t.kind = 'web'
    )
    select
      ev.events_30j::int as events_30j,
      ev.events_pub::int as events_pub_30j,
      ev.exact::int as exact,
      ev.by_name::int as by_name,
      ev.unresolved::int as unresolved,
      ev.leads::int as leads_30j,
      ev.leads_without_utm::int as leads_without_utm,
      ev7.n::int as events_7j,
      (select yes from active) as pixel_active_7j,
      ev.sessions::int as pixel_sessions_30j,
      ev.sessions_with_id::int as pixel_sessions_with_id,
      ${isoMs(sql`last_web.at`)} as pixel_derniere_activite
    from ev, ev7, last_web`,
  );
  if (!counts) throw new Error("attribution health: no row");
  const unresolved = await rows<UnresolvedSignal>(
    db,
    sql`
    select (r.key::jsonb)->>0 as utm_ad_id, (r.key::jsonb)->>1 as meta_ad_id, (r.key::jsonb)->>2 as utm_content,
      sum(r.events)::int as n
    from report_rollup_daily r
    where r.account_id = ${accountId} and r.dim = 'unresolved_signal'
      and r.day between ${w.from}::date and ${w.to}::date
    group by r.key
    having sum(r.events) > 0
    order by n desc, 1, 2, 3`,
  );
  return { counts, unresolved };
}
