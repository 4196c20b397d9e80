import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { type BatchColumn, unnestRows } from "../db/unnest-rows.ts";

/** An event as stored, in the API's field names (the columns). */
export interface EventRecord {
  id: string;
  contact_id: string | null;
  event_type: string;
  event_subtype: string | null;
  event_datetime: string;
  contact_email: string | null;
  contact_name: string | null;
  contact_phone: string | null;
  value: number | null;
  amount: number | null;
  currency: string | null;
  product_key: string | null;
  product_name: string | null;
  assigned_user_name: string | null;
  is_paid: boolean | null;
  payment_status: string | null;
  booking_date: string | null;
  booking_time: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  utm_campaign_id: string | null;
  utm_adset_id: string | null;
  utm_ad_id: string | null;
  campaign_name: string | null;
  calendar_name: string | null;
  meta_ad_id: string | null;
  is_baseline: boolean;
  cancelled_at: string | null;
  origin: string;
  payload_hash: string;
  utm_enriched: boolean;
  resolution: "exact" | "by_name" | "unresolved";
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}

/**
 * Sale counting's columns as an event is written with them: null on events that are not sales or
 * payments, a prediction on those (recompute-sale-counts.ts, which recounts after the write).
 */
export interface EventSaleCount {
  counted: boolean | null;
  drop_reason: string | null;
  group_key: string | null;
  contact_seq: number | null;
  group_revenue: number | null;
  group_refunds: number | null;
  group_disputes: number | null;
}

/** What ingestion needs of an event already stored: whether it changed, and whom its sale counted for. */
export interface StoredEvent {
  payload_hash: string | null;
  contact_id: string | null;
  event_type: string;
}

/** The events among `ids` the account already has. */
export async function storedEvents(
  db: Sql,
  accountId: string,
  params: { ids: readonly string[] },
): Promise<Map<string, StoredEvent>> {
  const found = await rows<StoredEvent & { id: string }>(
    db,
    sql`
      select id, payload_hash, contact_id, event_type from events
      where account_id = ${accountId}
        and id in (select jsonb_array_elements_text(${JSON.stringify(params.ids)}::jsonb))`,
    { prepare: true },
  );
  return new Map(found.map(({ id, ...stored }) => [id, stored]));
}

/** The received columns, with their SQL types (the record set of one batch). */
export const EVENT_COLUMNS: readonly BatchColumn<EventRecord>[] = [
  ["id", "text"],
  ["contact_id", "uuid"],
  ["event_type", "text"],
  ["event_subtype", "text"],
  ["event_datetime", "timestamptz"],
  ["contact_email", "text"],
  ["contact_name", "text"],
  ["contact_phone", "text"],
  ["value", "numeric"],
  ["amount", "numeric"],
  ["currency", "text"],
  ["product_key", "text"],
  ["product_name", "text"],
  ["assigned_user_name", "text"],
  ["is_paid", "boolean"],
  ["payment_status", "text"],
  ["booking_date", "date"],
  ["booking_time", "text"],
  ["utm_source", "text"],
  ["utm_medium", "text"],
  ["utm_campaign", "text"],
  ["utm_content", "text"],
  ["utm_term", "text"],
  ["utm_campaign_id", "text"],
  ["utm_adset_id", "text"],
  ["utm_ad_id", "text"],
  ["campaign_name", "text"],
  ["calendar_name", "text"],
  ["meta_ad_id", "text"],
  ["is_baseline", "boolean"],
  ["cancelled_at", "timestamptz"],
  ["origin", "text"],
  ["payload_hash", "text"],
  ["utm_enriched", "boolean"],
  ["resolution", "text"],
  ["resolved_platform", "text"],
  ["resolved_ad_id", "text"],
];
const SALE_COUNT_COLUMNS: readonly BatchColumn<EventSaleCount>[] = [
  ["counted", "boolean"],
  ["drop_reason", "text"],
  ["group_key", "text"],
  ["contact_seq", "int"],
  ["group_revenue", "numeric"],
  ["group_refunds", "numeric"],
  ["group_disputes", "numeric"],
];
/** What an upsert writes; a changed event has all of it replaced, its sale counting too. */
const WRITTEN_COLUMNS: readonly BatchColumn<EventRecord & EventSaleCount>[] = [
  ...EVENT_COLUMNS,
  ...SALE_COUNT_COLUMNS,
];
const names = WRITTEN_COLUMNS.map(([name]) => name).join(", ");
const replaced = WRITTEN_COLUMNS.filter(([name]) => name !== "id")
  .map(([name]) => `${name} = excluded.${name}`)
  .join(", ");

/**
 * Inserts the events, or replaces those whose content changed, in one statement (the batch travels
 * as one array per column: unnest-rows.ts); ids must be unique in the batch. Answers what happened to each id
 * ('inserted' | 'updated'; absent = unchanged).
 */
export async function upsertEvents(
  db: Sql,
  accountId: string,
  params: { events: readonly (EventRecord & EventSaleCount)[] },
): Promise<Map<string, "inserted" | "updated">> {
  const outcomes = new Map<string, "inserted" | "updated">();
  if (params.events.length === 0) return outcomes;
  const written = await rows<{ id: string; inserted: boolean }>(
    db,
    sql`
      insert into events (account_id, ${sql.raw(names)})
      select ${accountId}, ${sql.raw(names)}
      from ${unnestRows(params.events, WRITTEN_COLUMNS, "e")}
      on conflict (account_id, id) do update set ${sql.raw(replaced)}, updated_at = now()
      where events.payload_hash is distinct from excluded.payload_hash
      returning id, (xmax = 0) as inserted`,
    { prepare: true },
  );
  for (const w of written) outcomes.set(w.id, w.inserted ? "inserted" : "updated");
  return outcomes;
}
