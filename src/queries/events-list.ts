import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";

/** Where a page continues: strictly before `at`, or, with `id`, strictly after (at, id) in page order. */
export interface EventsCursor {
  /** ISO 8601 instant. */
  at: string;
  id?: string;
}

export interface EventsPageParams {
  /** Event types to keep (the `type` filter after grouping); none → every type. */
  types?: readonly string[];
  /** Assigned rep's name, compared case-insensitively. */
  rep?: string;
  window?: ReportWindow;
  cursor?: EventsCursor;
  limit: number;
}

export interface EventRow {
  account_id: string;
  id: string;
  event_type: string;
  event_subtype: string | null;
  event_datetime: string;
  contact_email: string | null;
  contact_name: string | null;
  contact_phone: string | null;
  contact_id: string | null;
  value: number | null;
  amount: number | null;
  product_key: string | null;
  product_name: string | null;
  assigned_user_name: string | null;
  is_paid: boolean | null;
  payment_status: string | null;
  booking_date: string | null;
  booking_time: string | null;
  utm_source: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  campaign_name: string | null;
  calendar_name: string | null;
  meta_ad_id: string | null;
  is_baseline: boolean;
  cancelled_at: string | null;
  has_more: boolean;
  counted: boolean | null;
  drop_reason: string | null;
  group_key: string | null;
  contact_seq: number | null;
  cursor: string;
}

/**
 * ISO 8601 in UTC: milliseconds as JavaScript writes them, microseconds when the instant has any,
 * so that an `event_datetime` given back as a cursor is the event's exact instant.
 */
const iso = (column: SQL) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.' || case when date_trunc('milliseconds', ${column}) = ${column} then 'MS' else 'US' end || '"Z"')`;

/**
 * One page of the account's CRM events, newest first (event_datetime desc, id desc in byte order),
 * `limit + 1` rows fetched to tell whether a next page exists. Each row carries its `cursor`:
 * base64url of `<event_datetime with microseconds>|<id>`, continuing strictly after that row.
 */
export async function eventsPage(db: Sql, accountId: string, params: EventsPageParams) {
  const w = params.window;
  const c = params.cursor;
  const found = await rows<EventRow>(
    db,
    sql`
    select
      e.account_id,
      e.id,
      e.event_type,
      e.event_subtype,
      ${iso(sql`e.event_datetime`)} as event_datetime,
      e.contact_email,
      e.contact_name,
      e.contact_phone,
      e.contact_id::text as contact_id,
      e.value::float8 as value,
      e.amount::float8 as amount,
      e.product_key,
      e.product_name,
      e.assigned_user_name,
      e.is_paid,
      e.payment_status,
      e.booking_date::text as booking_date,
      e.booking_time,
      e.utm_source,
      e.utm_campaign,
      e.utm_content,
      e.campaign_name,
      e.calendar_name,
      e.meta_ad_id,
      e.is_baseline,
      ${iso(sql`e.cancelled_at`)} as cancelled_at,
      false as has_more,
      e.counted,
      e.drop_reason,
      e.group_key,
      e.contact_seq,
      translate(
        encode(convert_to(to_char(e.event_datetime at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || e.id, 'UTF8'), 'base64'),
        e'+/=\n', '-_'
      ) as cursor
    from events e
    where e.account_id = ${accountId}
      ${
        params.types && params.types.length > 0
          ? sql`and e.event_type in (${sql.join(
              params.types.map((t) => sql`${t}`),
              sql`, `,
            )})`
          : sql``
      }
      ${params.rep !== undefined ? sql`and lower(e.assigned_user_name) = lower(${params.rep})` : sql``}
      ${w ? sql`and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz` : sql``}
      ${
        c === undefined
          ? sql``
          : c.id === undefined
            ? sql`and e.event_datetime < ${c.at}::timestamptz`
            : sql`and (e.event_datetime < ${c.at}::timestamptz
                       or (e.event_datetime = ${c.at}::timestamptz and e.id collate "C" < ${c.id} collate "C"))`
      }
    order by e.event_datetime desc, e.id collate "C" desc
    limit ${params.limit + 1}`,
  );
  const hasMore = found.length > params.limit;
  const page = found.slice(0, params.limit);
  for (const row of page) row.has_more = hasMore;
  return ownedRows(page);
}
