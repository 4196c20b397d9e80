import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface WebTouch {
  externalId: string | null;
  contactId: string | null;
  visitorId: string;
  sessionId: string | null;
  kind: "web" | "conversion";
  eventType: string;
  occurredAt: Date;
  url: string;
  referrer: string | null;
  utm: Record<string, string | undefined>;
  adIds: Record<string, string | undefined>;
  clickIds: Record<string, string>;
  channel: string | null;
  isPaid: boolean;
  resolution: "exact" | "by_name" | "unresolved";
  resolvedPlatform: string | null;
  resolvedAdId: string | null;
}

/** A touchpoint of a batch; `contactId` null with `lookUpContact` takes the visitor's latest contact. */
export interface BatchedWebTouch extends WebTouch {
  lookUpContact: boolean;
}

/**
 * Stores a batch of beacons' touchpoints in one statement (beacons already stored, by external id,
 * are skipped). A touch marked `lookUpContact` gets its visitor's latest contact as the statement
 * starts, as `contactOfVisitor` would.
 */
export async function insertWebTouchpoints(
  db: Sql,
  accountId: string,
  touches: readonly BatchedWebTouch[],
): Promise<void> {
  const batch = JSON.stringify(
    touches.map((t, ord) => ({
      ord,
      id: randomUUID(),
      external_id: t.externalId,
      contact_id: t.contactId,
      look_up: t.lookUpContact,
      visitor_id: t.visitorId,
      session_id: t.sessionId,
      kind: t.kind,
      event_type: t.eventType,
      occurred_at: t.occurredAt.toISOString(),
      url: t.url,
      referrer: t.referrer,
      utm: t.utm,
      ad_ids: t.adIds,
      click_ids: t.clickIds,
      channel: t.channel,
      is_paid: t.isPaid,
      resolution: t.resolution,
      resolved_platform: t.resolvedPlatform,
      resolved_ad_id: t.resolvedAdId,
    })),
  );
  await rows(
    db,
    sql`
    insert into touchpoints (account_id, id, external_id, contact_id, visitor_id, session_id, kind, event_type,
                             occurred_at, url, referrer, utm, ad_ids, click_ids, channel, is_paid,
                             resolution, resolved_platform, resolved_ad_id)
    select ${accountId}, r.id, r.external_id,
           coalesce(r.contact_id, case when r.look_up then (
             select t.contact_id from touchpoints t
             where t.account_id = ${accountId} and t.visitor_id = r.visitor_id and t.contact_id is not null
             order by t.occurred_at desc limit 1) end),
           r.visitor_id, r.session_id, r.kind, r.event_type, r.occurred_at, r.url, r.referrer,
           r.utm, r.ad_ids, r.click_ids, r.channel, r.is_paid, r.resolution, r.resolved_platform, r.resolved_ad_id
    from jsonb_to_recordset(${batch}::jsonb)
      as r(ord int, id uuid, external_id text, contact_id uuid, look_up boolean, visitor_id text, session_id text,
           kind text, event_type text, occurred_at timestamptz, url text, referrer text, utm jsonb, ad_ids jsonb,
           click_ids jsonb, channel text, is_paid boolean, resolution text, resolved_platform text,
           resolved_ad_id text)
    order by r.ord
    on conflict (account_id, external_id) where external_id is not null do nothing`,
    { prepare: true },
  );
}

/**
 * Visitor ids as one array value (an init plan): `visitor_id = any(…)` is then an index condition,
 * where a join against `jsonb_to_recordset` (estimated at 100 rows) is planned as a scan of every
 * touchpoint of the account.
 */
function visitorArray(visitorIds: readonly string[]) {
  return sql`array(select jsonb_array_elements_text(${JSON.stringify(visitorIds)}::jsonb))`;
}

/** Visitors become contacts: their earlier anonymous touchpoints join the contact's journey (one contact per visitor). */
export async function adoptVisitors(
  db: Sql,
  accountId: string,
  params: { adoptions: readonly { visitorId: string; contactId: string }[] },
): Promise<void> {
  if (params.adoptions.length === 0) return;
  const batch = JSON.stringify(
    params.adoptions.map((a) => ({ visitor_id: a.visitorId, contact_id: a.contactId })),
  );
  await rows(
    db,
    sql`
    update touchpoints t set contact_id = m.contact_id
    from jsonb_to_recordset(${batch}::jsonb) as m(visitor_id text, contact_id uuid)
    where t.account_id = ${accountId} and t.visitor_id = m.visitor_id and t.contact_id is null
      and t.visitor_id = any(${visitorArray(params.adoptions.map((a) => a.visitorId))})`,
    { prepare: true },
  );
}
