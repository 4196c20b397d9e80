import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { favourIndexOnlySift, walkLength } from "./contact-search.ts";
import { containsPattern, isoMs } from "./sql-format.ts";

export interface ContactsPageParams {
  /** Contacts whose last CRM event falls in the window; none → every contact. */
  window?: ReportWindow;
  /** A fragment of the email, name or phone (case-insensitive). */
  search?: string;
  limit: number;
  offset: number;
}

export interface ContactRow {
  account_id: string;
  email: string | null;
  total_events: number;
  event_types: string[];
  first_event_date: string | null;
  last_event_date: string | null;
  name: string | null;
  phone: string | null;
  sources: string[];
  assigned_user_name: string | null;
  value: number | null;
  form_titles: string[];
  has_campaign: boolean;
  tags: string[];
  form_response: unknown;
}

/**
 * One page of the account's contacts, most recently active first (last CRM event descending,
 * contacts without any event last, then contact id): the page is cut from contact_activity's
 * index alone (an index-only scan: a deep offset skips index entries, not rows), then only its
 * contacts' rows and events are read.
 */
export async function contactsList(db: Sql, accountId: string, params: ContactsPageParams) {
  if (params.search !== undefined) await favourIndexOnlySift(db);
  return ownedRows(await rows<ContactRow>(db, contactsListQuery(accountId, params)));
}

/** contactsList's statement. */
export function contactsListQuery(accountId: string, params: ContactsPageParams): SQL {
  const w = params.window;
  const pattern = params.search === undefined ? null : containsPattern(params.search);
  const walkRows = walkLength(params);
  const inWindow = w
    ? sql`and a.last_event_at >= ${w.start}::timestamptz and a.last_event_at < ${w.end}::timestamptz`
    : sql``;
  const page =
    pattern === null
      ? sql`page as (
        -- Keys only: an index-only scan, however deep the offset.
        select a.contact_id, a.last_event_at
        from contact_activity a
        where a.account_id = ${accountId} ${inWindow}
        order by a.last_event_at desc nulls last, a.contact_id desc
        limit ${params.limit} offset ${params.offset}
      )`
      : sql`walked as materialized (
        -- A fragment many contacts hold: the first contacts in the page's order, each tested by its
        -- key, hold the page. The sift below would test every contact of the account first.
        select a.contact_id, a.last_event_at
        from contact_activity a
        where a.account_id = ${accountId} ${inWindow}
        order by a.last_event_at desc nulls last, a.contact_id desc
        limit ${walkRows}
      ), kept as materialized (
        select k.contact_id, k.last_event_at
        from walked k
        -- lateral, not EXISTS: without the account's statistics (PGlite) a semi-join was planned
        -- as every contact of the account against every walked one.
        cross join lateral (
          select 1 from contacts s
          where s.account_id = ${accountId} and s.id = k.contact_id
            and strpos(s.search_text, lower(${params.search})) > 0
            and (s.email ilike ${pattern} or s.name ilike ${pattern} or s.phone ilike ${pattern}
                 or (s.first_name || ' ' || s.last_name) ilike ${pattern})
          limit 1
        ) hit
      ), walk as (
        -- Enough when the walk kept the page's last match, or walked the whole list.
        select (select count(*) from kept) >= ${params.offset + params.limit}
            or (select count(*) from walked) < ${walkRows} as sufficed
      ), hits as materialized (
        -- A rarer fragment: the sift over contacts_search_idx alone (migration 0020), strpos over
        -- the account's entries (reading no other account's), then the exact ILIKEs read the rows
        -- it kept, each by its key (lateral: never a scan of the table). Not run when the walk
        -- sufficed (a one-time filter).
        select h.id
        from (
          select s.id from contacts s
          where s.account_id = ${accountId} and strpos(s.search_text, lower(${params.search})) > 0
            and not (select sufficed from walk)
          offset 0 -- kept apart, so the planner cannot merge it with the exact test below
        ) h
        cross join lateral (
          select 1 from contacts s
          where s.account_id = ${accountId} and s.id = h.id
            and (s.email ilike ${pattern} or s.name ilike ${pattern} or s.phone ilike ${pattern}
                 or (s.first_name || ' ' || s.last_name) ilike ${pattern})
          limit 1
        ) exact
      ), page as (
        (select k.contact_id, k.last_event_at
         from kept k
         where (select sufficed from walk)
         order by k.last_event_at desc nulls last, k.contact_id desc
         limit ${params.limit} offset ${params.offset})
        union all
        (select a.contact_id, a.last_event_at
         from contact_activity a
         join hits h on h.id = a.contact_id
         where a.account_id = ${accountId} ${inWindow} and not (select sufficed from walk)
         order by a.last_event_at desc nulls last, a.contact_id desc
         limit ${params.limit} offset ${params.offset})
      )`;
  return sql`
      with ${page}
      select
        c.account_id,
        c.email,
        coalesce(ev.total_events, 0) as total_events,
        coalesce(ev.event_types, '{}') as event_types,
        ${isoMs(sql`pa.first_event_at`)} as first_event_date,
        ${isoMs(sql`p.last_event_at`)} as last_event_date,
        coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')) as name,
        c.phone,
        coalesce(ev.sources, '{}') as sources,
        coalesce(c.assigned_user_name, ev.latest_rep) as assigned_user_name,
        c.value::float8 as value,
        c.form_titles,
        coalesce(ev.has_campaign, false) as has_campaign,
        c.tags,
        c.form_response
      from page p
      join contact_activity pa on pa.account_id = ${accountId} and pa.contact_id = p.contact_id
      join contacts c on c.account_id = ${accountId} and c.id = p.contact_id
      left join lateral (
        select
          count(*)::int as total_events,
          array_agg(distinct e.event_type order by e.event_type) as event_types,
          coalesce(array_agg(distinct btrim(e.utm_source)) filter (where nullif(btrim(e.utm_source), '') is not null), '{}') as sources,
          (array_agg(e.assigned_user_name order by e.event_datetime desc, e.id desc)
            filter (where nullif(btrim(e.assigned_user_name), '') is not null))[1] as latest_rep,
          bool_or(coalesce(nullif(btrim(e.utm_campaign), ''), nullif(btrim(e.campaign_name), ''), nullif(btrim(e.utm_campaign_id), '')) is not null) as has_campaign
        from events e
        where e.account_id = ${accountId} and e.contact_id = p.contact_id
      ) ev on true
      order by p.last_event_at desc nulls last, p.contact_id desc`;
}
