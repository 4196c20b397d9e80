import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { favourIndexOnlySift, walkLength } from "./contact-search.ts";
import { containsPattern, isoMs } from "./sql-format.ts";
import {
  type AdIdsObject,
  adIdsObject,
  contactObject,
  touchPlatform,
  type UtmObject,
  utmObject,
} from "./touchpoint-shape.ts";

export interface JourneysPageParams {
  /** Contacts whose last activity (event or touchpoint) falls in the window; none → all. */
  window?: ReportWindow;
  /** A fragment of the contact's email (case-insensitive). */
  search?: string;
  limit: number;
  offset: number;
}

interface TouchSummary {
  occurred_at: string;
  event_type: string;
  is_paid: boolean;
  platform: string | null;
  utm: UtmObject;
  ad_ids: AdIdsObject;
}

export interface JourneyRow {
  account_id: string;
  contact: {
    email: string | null;
    phone: string | null;
    first_name: string | null;
    last_name: string | null;
  };
  first_seen_at: string;
  last_seen_at: string;
  first_touch: TouchSummary | null;
  last_touch: TouchSummary | null;
  touchpoint_counts: { web: number; conversion: number; total: number };
  milestones: {
    first_lead_at: string | null;
    first_booking_at: string | null;
    first_sale_at: string | null;
    revenue: number;
  };
  event_types_seen: string[];
}

const touchSummary = sql`jsonb_build_object(
  'occurred_at', ${isoMs(sql`t.occurred_at`)},
  'event_type', t.event_type,
  'is_paid', t.is_paid,
  'platform', ${touchPlatform("t")},
  'utm', ${utmObject("t")},
  'ad_ids', ${adIdsObject("t")})`;

/**
 * One page of the account's journeys, most recently active contact first (contact_activity's
 * last sighting, then contact id); each page's contacts' touchpoints and events are read through
 * their per-contact indexes (docs/metrics.md "Journeys").
 */
export async function journeysPage(db: Sql, accountId: string, params: JourneysPageParams) {
  const w = params.window;
  const pattern = params.search === undefined ? null : containsPattern(params.search);
  if (pattern !== null) await favourIndexOnlySift(db);
  const walkRows = walkLength(params);
  const inWindow = w
    ? sql`and a.last_seen_at >= ${w.start}::timestamptz and a.last_seen_at < ${w.end}::timestamptz`
    : sql``;
  return ownedRows(
    await rows<JourneyRow>(
      db,
      sql`
      with ${
        pattern === null
          ? sql`page as (
        -- Keys only: an index-only scan, however deep the offset.
        select a.contact_id, a.last_seen_at
        from contact_activity a
        where a.account_id = ${accountId} and a.last_seen_at is not null ${inWindow}
        order by a.last_seen_at desc, a.contact_id desc
        limit ${params.limit} offset ${params.offset}
      )`
          : sql`walked as materialized (
        -- As /contacts' search (contacts-list.ts): the page's order walked first, each contact
        -- tested by its key; the sift when the walk found too few.
        select a.contact_id, a.last_seen_at
        from contact_activity a
        where a.account_id = ${accountId} and a.last_seen_at is not null ${inWindow}
        order by a.last_seen_at desc, a.contact_id desc
        limit ${walkRows}
      ), kept as materialized (
        select k.contact_id, k.last_seen_at
        from walked k
        cross join lateral (
          select 1 from contacts s
          where s.account_id = ${accountId} and s.id = k.contact_id
            and strpos(s.search_text, lower(${params.search})) > 0 and s.email ilike ${pattern}
          limit 1
        ) hit
      ), walk as (
        select (select count(*) from kept) >= ${params.offset + params.limit}
            or (select count(*) from walked) < ${walkRows} as sufficed
      ), page as (
        (select k.contact_id, k.last_seen_at
         from kept k
         where (select sufficed from walk)
         order by k.last_seen_at desc, k.contact_id desc
         limit ${params.limit} offset ${params.offset})
        union all
        (select s.id as contact_id, a.last_seen_at
         from (
           -- contacts_search_idx alone (migration 0020): the account's entries, not its rows. The
           -- cheap strpos sifts them first (kept apart), the exact ILIKE decides. Not run when the
           -- walk sufficed (a one-time filter).
           select s.id, s.email from contacts s
           where s.account_id = ${accountId} and strpos(s.search_text, lower(${params.search})) > 0
             and not (select sufficed from walk)
           offset 0
         ) s
         -- Each kept contact's sighting by its key (lateral, and the sighting tested outside it, so
         -- that only the primary key serves): planned as a join, or by the index of sightings, PGlite
         -- without fresh statistics for contact_activity scanned it once per contact (minutes at
         -- 40,000 contacts).
         cross join lateral (
           select a.last_seen_at from contact_activity a
           where a.account_id = ${accountId} and a.contact_id = s.id
           limit 1 -- never pulled up into a join
         ) a
         where s.email ilike ${pattern} and a.last_seen_at is not null ${inWindow}
         order by a.last_seen_at desc, s.id desc
         limit ${params.limit} offset ${params.offset})
      )`
      }
      select
        c.account_id,
        ${contactObject("c")} as contact,
        ${isoMs(sql`pa.first_seen_at`)} as first_seen_at,
        ${isoMs(sql`p.last_seen_at`)} as last_seen_at,
        ft.point as first_touch,
        lt.point as last_touch,
        jsonb_build_object('web', tc.web, 'conversion', tc.conversion, 'total', tc.web + tc.conversion)
          as touchpoint_counts,
        jsonb_build_object(
          'first_lead_at', ${isoMs(sql`ev.first_lead_at`)},
          'first_booking_at', ${isoMs(sql`ev.first_booking_at`)},
          'first_sale_at', ${isoMs(sql`ev.first_sale_at`)},
          'revenue', round(coalesce(ev.revenue, 0), 2)::float8) as milestones,
        array(select distinct x from unnest(coalesce(tc.types, '{}') || coalesce(ev.types, '{}')) as x order by x)
          as event_types_seen
      from page p
      join contact_activity pa on pa.account_id = ${accountId} and pa.contact_id = p.contact_id
      join contacts c on c.account_id = ${accountId} and c.id = p.contact_id
      left join lateral (
        select ${touchSummary} as point from touchpoints t
        where t.account_id = ${accountId} and t.contact_id = p.contact_id
        order by t.occurred_at, t.id limit 1
      ) ft on true
      left join lateral (
        select ${touchSummary} as point from touchpoints t
        where t.account_id = ${accountId} and t.contact_id = p.contact_id
        order by t.occurred_at desc, t.id desc limit 1
      ) lt on true
      left join lateral (
        select count(*) filter (where t.kind = 'web')::int as web,
               count(*) filter (where t.kind = 'conversion')::int as conversion,
               array_agg(distinct t.event_type) as types
        from touchpoints t
        where t.account_id = ${accountId} and t.contact_id = p.contact_id
      ) tc on true
      left join lateral (
        select min(e.event_datetime) filter (where e.event_type = 'lead') as first_lead_at,
               min(e.event_datetime) filter (where e.event_type = 'booking') as first_booking_at,
               min(e.event_datetime) filter (where e.counted) as first_sale_at,
               sum(e.group_revenue) filter (where e.counted) as revenue,
               array_agg(distinct e.event_type) as types
        from events e
        where e.account_id = ${accountId} and e.contact_id = p.contact_id
      ) ev on true
      order by p.last_seen_at desc, p.contact_id desc`,
    ),
  );
}

/** The day since which web touchpoints exist (account timezone), null before the first. */
export async function webTouchpointsSince(db: Sql, accountId: string, timezone: string) {
  const found = await rows<{ since: string | null }>(
    db,
    sql`
    select to_char(min(t.occurred_at) at time zone ${timezone}, 'YYYY-MM-DD') as since
    from touchpoints t
    where t.account_id = ${accountId} and t.kind = 'web'`,
  );
  return found[0]?.since ?? null;
}
