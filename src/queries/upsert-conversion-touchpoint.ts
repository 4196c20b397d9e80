import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface ConversionTouch {
  eventId: string;
  contactId: string | null;
  eventType: string;
  occurredAt: string;
  utm: Record<string, string | undefined>;
  adIds: Record<string, string | undefined>;
  isPaid: boolean;
  value: number | null;
  currency: string | null;
  product: string | null;
  isImported: boolean;
  resolution: "exact" | "by_name" | "unresolved";
  resolvedPlatform: string | null;
  resolvedAdId: string | null;
}

/** Every CRM event is also a conversion touchpoint of its contact's journey (external id `event:<id>`). */
export async function upsertConversionTouchpoints(
  db: Sql,
  accountId: string,
  params: { touches: readonly ConversionTouch[] },
): Promise<void> {
  if (params.touches.length === 0) return;
  const batch = JSON.stringify(
    params.touches.map((t) => ({
      id: randomUUID(),
      external_id: `event:${t.eventId}`,
      contact_id: t.contactId,
      event_type: t.eventType,
      occurred_at: t.occurredAt,
      utm: t.utm,
      ad_ids: t.adIds,
      is_paid: t.isPaid,
      value: t.value,
      currency: t.currency,
      product: t.product,
      is_imported: t.isImported,
      event_id: t.eventId,
      resolution: t.resolution,
      resolved_platform: t.resolvedPlatform,
      resolved_ad_id: t.resolvedAdId,
    })),
  );
  await rows(
    db,
    sql`
    insert into touchpoints (account_id, id, external_id, contact_id, kind, event_type, occurred_at, utm, ad_ids,
                             is_paid, value, currency, product, is_imported, event_id, resolution,
                             resolved_platform, resolved_ad_id)
    select ${accountId}, t.id, t.external_id, t.contact_id, 'conversion', t.event_type, t.occurred_at,
           coalesce(t.utm, '{}'::jsonb), coalesce(t.ad_ids, '{}'::jsonb), t.is_paid, t.value, t.currency, t.product,
           t.is_imported, t.event_id, t.resolution, t.resolved_platform, t.resolved_ad_id
    from jsonb_to_recordset(${batch}::jsonb)
      as t(id uuid, external_id text, contact_id uuid, event_type text, occurred_at timestamptz, utm jsonb,
           ad_ids jsonb, is_paid boolean, value numeric, currency text, product text, is_imported boolean,
           event_id text, resolution text, resolved_platform text, resolved_ad_id text)
    on conflict (account_id, external_id) where external_id is not null do update set
      contact_id = excluded.contact_id, event_type = excluded.event_type, occurred_at = excluded.occurred_at,
      utm = excluded.utm, ad_ids = excluded.ad_ids, is_paid = excluded.is_paid, value = excluded.value,
      currency = excluded.currency, product = excluded.product, resolution = excluded.resolution,
      resolved_platform = excluded.resolved_platform, resolved_ad_id = excluded.resolved_ad_id
    -- The same touch again writes nothing (and fires no trigger for it).
    where (touchpoints.contact_id, touchpoints.event_type, touchpoints.occurred_at, touchpoints.utm,
           touchpoints.ad_ids, touchpoints.is_paid, touchpoints.value, touchpoints.currency, touchpoints.product,
           touchpoints.resolution, touchpoints.resolved_platform, touchpoints.resolved_ad_id)
      is distinct from (excluded.contact_id, excluded.event_type, excluded.occurred_at, excluded.utm,
           excluded.ad_ids, excluded.is_paid, excluded.value, excluded.currency, excluded.product,
           excluded.resolution, excluded.resolved_platform, excluded.resolved_ad_id)`,
    { prepare: true },
  );
}
