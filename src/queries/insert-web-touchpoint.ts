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

/** Stores a beacon's touchpoint; false when the same beacon (external id) was already stored. */
export async function insertWebTouchpoint(db: Sql, accountId: string, t: WebTouch): Promise<boolean> {
  const inserted = await rows<{ id: string }>(
    db,
    sql`
      insert into touchpoints (account_id, id, external_id, contact_id, visitor_id, session_id, kind, event_type,
                               occurred_at, url, referrer, utm, ad_ids, click_ids, channel, is_paid,
                               resolution, resolved_platform, resolved_ad_id)
      values (${accountId}, ${randomUUID()}, ${t.externalId}, ${t.contactId}, ${t.visitorId}, ${t.sessionId},
              ${t.kind}, ${t.eventType}, ${t.occurredAt}, ${t.url}, ${t.referrer}, ${JSON.stringify(t.utm)}::jsonb,
              ${JSON.stringify(t.adIds)}::jsonb, ${JSON.stringify(t.clickIds)}::jsonb, ${t.channel}, ${t.isPaid},
              ${t.resolution}, ${t.resolvedPlatform}, ${t.resolvedAdId})
      on conflict (account_id, external_id) where external_id is not null do nothing
      returning id`,
  );
  return inserted.length > 0;
}

/** The contact a visitor already became, if any. */
export async function contactOfVisitor(db: Sql, accountId: string, params: { visitorId: string }) {
  const found = await rows<{ contact_id: string }>(
    db,
    sql`
      select contact_id from touchpoints
      where account_id = ${accountId} and visitor_id = ${params.visitorId} and contact_id is not null
      order by occurred_at desc limit 1`,
  );
  return found[0]?.contact_id ?? null;
}

/** A visitor becomes a contact: its earlier anonymous touchpoints join the contact's journey. */
export async function adoptVisitor(
  db: Sql,
  accountId: string,
  params: { visitorId: string; contactId: string },
): Promise<void> {
  await db.execute(sql`
    update touchpoints set contact_id = ${params.contactId}
    where account_id = ${accountId} and visitor_id = ${params.visitorId} and contact_id is null`);
}

/** Adds a form's title to the contact's form titles (once). */
export async function addFormTitle(db: Sql, accountId: string, params: { contactId: string; title: string }) {
  await db.execute(sql`
    update contacts set form_titles = array_append(form_titles, ${params.title}), updated_at = now()
    where account_id = ${accountId} and id = ${params.contactId} and not (${params.title} = any(form_titles))`);
}
