import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface HealthCounts {
  events_30j: number;
  events_pub_30j: number;
  exact: number;
  by_name: number;
  unresolved: number;
  leads_30j: number;
  leads_without_utm: number;
  events_7j: number;
  web_7j: number;
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

const blank = (column: ReturnType<typeof sql.raw>) => sql`nullif(btrim(${column}), '') is null`;

/**
 * Capture health counts over a window (the last 30 days) and the 7 days before `now`, plus the
 * distinct ad signals of the window's unresolved events (for macro detection, which is JS: see
 * `isUnresolvedMacro`). An event carries an ad signal when it has a non-blank utm_ad_id, meta_ad_id
 * or utm_content (what ad resolution reads). Two statements.
 */
export async function attributionHealthCounts(
  db: Sql,
  accountId: string,
  params: { window: ReportWindow; now: Date },
): Promise<{ counts: HealthCounts; unresolved: UnresolvedSignal[] }> {
  const w = params.window;
  const now = params.now.toISOString();
  const signal = sql`not (${blank(sql.raw("e.utm_ad_id"))} and ${blank(sql.raw("e.meta_ad_id"))}
    and ${blank(sql.raw("e.utm_content"))})`;
  const noUtm = sql`(${blank(sql.raw("e.utm_source"))} and ${blank(sql.raw("e.utm_medium"))}
    and ${blank(sql.raw("e.utm_campaign"))} and ${blank(sql.raw("e.utm_content"))}
    and ${blank(sql.raw("e.utm_term"))} and ${blank(sql.raw("e.utm_ad_id"))} and ${blank(sql.raw("e.meta_ad_id"))})`;
  const [counts] = await rows<HealthCounts>(
    db,
    sql`
    with ev as (
      select
        count(*) as events_30j,
        count(*) filter (where ${signal}) as events_pub,
        count(*) filter (where ${signal} and e.resolution = 'exact') as exact,
        count(*) filter (where ${signal} and e.resolution = 'by_name') as by_name,
        count(*) filter (where ${signal} and e.resolution = 'unresolved') as unresolved,
        count(*) filter (where e.event_type = 'lead') as leads,
        count(*) filter (where e.event_type = 'lead' and ${noUtm}) as leads_without_utm
      from events e
      where e.account_id = ${accountId}
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
    ),
    ev7 as (
      select count(*) as n from events e
      where e.account_id = ${accountId} and e.event_datetime > ${now}::timestamptz - interval '7 days'
        and e.event_datetime <= ${now}::timestamptz
    ),
    web as (
      select count(distinct coalesce(t.session_id, 'tp:' || t.id::text)) as sessions,
             count(distinct coalesce(t.session_id, 'tp:' || t.id::text))
               filter (where t.ad_ids <> '{}'::jsonb or t.click_ids <> '{}'::jsonb) as with_id
      from touchpoints t
      where t.account_id = ${accountId} and t.kind = 'web'
        and t.occurred_at >= ${w.start}::timestamptz and t.occurred_at < ${w.end}::timestamptz
    ),
    web7 as (
      select count(*) as n from touchpoints t
      where t.account_id = ${accountId} and t.kind = 'web'
        and t.occurred_at > ${now}::timestamptz - interval '7 days' and t.occurred_at <= ${now}::timestamptz
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
      web7.n::int as web_7j,
      web.sessions::int as pixel_sessions_30j,
      web.with_id::int as pixel_sessions_with_id,
      to_char(last_web.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as pixel_derniere_activite
    from ev, ev7, web, web7, last_web`,
  );
  if (!counts) throw new Error("attribution health: no row");
  const unresolved = await rows<UnresolvedSignal>(
    db,
    sql`
    select e.utm_ad_id, e.meta_ad_id, e.utm_content, count(*)::int as n
    from events e
    where e.account_id = ${accountId} and e.resolution = 'unresolved' and ${signal}
      and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
    group by 1, 2, 3
    order by n desc, 1, 2, 3`,
  );
  return { counts, unresolved };
}
