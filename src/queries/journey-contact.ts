import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { markOwner, ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";
import { contactObject, TOUCHPOINT_COLUMNS, type TouchpointRow } from "./touchpoint-shape.ts";

interface ContactHead {
  account_id: string;
  id: string;
  contact: {
    email: string | null;
    phone: string | null;
    first_name: string | null;
    last_name: string | null;
  };
}

interface JourneyCounts {
  total: number;
  web: number;
  conversion: number;
  page_view: number;
  first_touch_at: string | null;
  last_touch_at: string | null;
}

/**
 * One contact's journey: the contact (by normalized email), its touchpoint counts, and the whole
 * chain in time order with what was captured at each moment — page views only when asked for
 * (the counts always include them). An unknown email gives a null contact and an empty chain.
 */
export async function journeyOfContact(
  db: Sql,
  accountId: string,
  params: { email: string; pageviews: boolean },
) {
  const heads = await rows<ContactHead>(
    db,
    sql`
    select c.account_id, c.id::text as id, ${contactObject("c")} as contact
    from contacts c where c.account_id = ${accountId} and c.email = ${params.email}`,
  );
  const head = heads[0];
  if (!head) {
    return {
      contact: null,
      first_touch_at: null,
      last_touch_at: null,
      counts: { total: 0, web: 0, conversion: 0, page_view: 0 },
      touchpoints: [],
    };
  }
  const [counts] = await rows<JourneyCounts>(
    db,
    sql`
    select count(*)::int as total,
           count(*) filter (where t.kind = 'web')::int as web,
           count(*) filter (where t.kind = 'conversion')::int as conversion,
           count(*) filter (where t.event_type = 'page_view')::int as page_view,
           ${isoMs(sql`min(t.occurred_at)`)} as first_touch_at,
           ${isoMs(sql`max(t.occurred_at)`)} as last_touch_at
    from touchpoints t
    where t.account_id = ${accountId} and t.contact_id = ${head.id}::uuid`,
  );
  const chain = await rows<TouchpointRow>(
    db,
    sql`
    select ${TOUCHPOINT_COLUMNS}
    from touchpoints t
    left join contacts c on c.account_id = t.account_id and c.id = t.contact_id
    where t.account_id = ${accountId} and t.contact_id = ${head.id}::uuid
      ${params.pageviews ? sql`` : sql`and t.event_type <> 'page_view'`}
    order by t.occurred_at, t.id`,
  );
  return {
    contact: markOwner(head.contact, head.account_id),
    first_touch_at: counts?.first_touch_at ?? null,
    last_touch_at: counts?.last_touch_at ?? null,
    counts: {
      total: counts?.total ?? 0,
      web: counts?.web ?? 0,
      conversion: counts?.conversion ?? 0,
      page_view: counts?.page_view ?? 0,
    },
    touchpoints: ownedRows(chain),
  };
}
