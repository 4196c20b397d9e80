import { createHash } from "node:crypto";
import { buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import type { Sql } from "../db/client.ts";
import { knownAds } from "../queries/known-ads.ts";
import { latestWebUtm } from "../queries/latest-web-utm.ts";
import type { ContactFacts } from "../queries/resolve-contacts.ts";
import { identityOf, resolveContacts } from "../queries/resolve-contacts.ts";
import {
  type ConversionTouch,
  upsertConversionTouchpoints,
} from "../queries/upsert-conversion-touchpoint.ts";
import { type EventRecord, eventHashes, upsertEvents } from "../queries/upsert-event.ts";
import type { CrmEvent } from "./crm-event.ts";
import { contactKey, normalizeEmail, normalizePhone } from "./identity.ts";
import { recomputeSaleCounts } from "./recompute-sale-counts.ts";

export type EventOrigin = "webhook" | "import" | "collect" | "demo";

export interface IngestResult {
  inserted: number;
  updated: number;
  /** Replays of content already stored: nothing written. */
  unchanged: number;
}

function payloadHash(event: CrmEvent): string {
  const canonical = Object.keys(event)
    .sort()
    .map((k) => [k, event[k as keyof CrmEvent] ?? null]);
  return createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
}

function hasAdSignal(e: CrmEvent): boolean {
  return Boolean(e.utm_source || e.utm_campaign || e.utm_content || e.utm_ad_id || e.meta_ad_id);
}

/**
 * Stores validated CRM events in the caller's transaction: identity (contact by email, else phone),
 * server-side UTM enrichment, ad resolution, the event itself (idempotent by id: a replay of the
 * same content writes nothing, a changed one replaces it), its conversion touchpoint, and sale
 * counting for the contacts touched. Set-based: a fixed number of statements per batch, not per
 * event. An id named twice in one batch keeps its last version (the earlier counts as unchanged).
 */
export async function ingestCrmEvents(
  tx: Sql,
  accountId: string,
  input: readonly CrmEvent[],
  options: { origin: EventOrigin },
): Promise<IngestResult> {
  return (await ingestCrmEventsById(tx, accountId, input, options)).result;
}

export type EventOutcome = keyof IngestResult;

/**
 * As `ingestCrmEvents`, with what happened to each id's last version (the group-committed Stripe
 * deliveries answer each delivery with its own).
 */
export async function ingestCrmEventsById(
  tx: Sql,
  accountId: string,
  input: readonly CrmEvent[],
  options: { origin: EventOrigin },
): Promise<{ result: IngestResult; byId: Map<string, EventOutcome> }> {
  const result: IngestResult = { inserted: 0, updated: 0, unchanged: 0 };
  const byId = new Map<string, EventOutcome>();
  if (input.length === 0) return { result, byId };
  const latest = new Map<string, CrmEvent>();
  for (const e of input) latest.set(e.id, e);
  result.unchanged += input.length - latest.size;
  const stored = await eventHashes(tx, accountId, { ids: [...latest.keys()] });

  // Only what changed goes further.
  const changed: { e: CrmEvent; hash: string; email: string | null; facts: ContactFacts | null }[] = [];
  for (const e of latest.values()) {
    const hash = payloadHash(e);
    if (stored.get(e.id) === hash) {
      result.unchanged += 1;
      byId.set(e.id, "unchanged");
      continue;
    }
    const email = normalizeEmail(e.contact_email);
    const phone = normalizePhone(e.contact_phone);
    const key = contactKey(email, phone);
    changed.push({ e, hash, email, facts: key ? { key, email, phone, name: e.contact_name ?? null } : null });
  }
  if (changed.length === 0) return { result, byId };

  const contacts = await resolveContacts(tx, accountId, {
    facts: changed.flatMap((c) => (c.facts ? [c.facts] : [])),
  });
  const contactOf = (c: (typeof changed)[number]) =>
    c.facts ? (contacts.get(identityOf(c.facts)) ?? null) : null;

  const needsEnrichment = changed.filter((c) => !hasAdSignal(c.e) && contactOf(c) !== null);
  const inherited = await latestWebUtm(tx, accountId, {
    lookups: needsEnrichment.map((c) => ({ contactId: contactOf(c) ?? "", before: c.e.event_datetime })),
  });
  const enrichment = new Map(needsEnrichment.map((c, i) => [c.e.id, inherited[i] ?? null]));

  const index = buildAdIndex(await knownAds(tx, accountId));
  const rows: EventRecord[] = [];
  const touches: ConversionTouch[] = [];
  for (const c of changed) {
    const e = c.e;
    const contactId = contactOf(c);
    let utm = {
      source: e.utm_source ?? undefined,
      medium: e.utm_medium ?? undefined,
      campaign: e.utm_campaign ?? undefined,
      content: e.utm_content ?? undefined,
      term: e.utm_term ?? undefined,
    };
    let adIds: Record<string, string | undefined> = {
      ad_id: e.utm_ad_id ?? undefined,
      adset_id: e.utm_adset_id ?? undefined,
      campaign_id: e.utm_campaign_id ?? undefined,
      meta_ad_id: e.meta_ad_id ?? undefined,
    };
    const inheritedUtm = enrichment.get(e.id) ?? null;
    if (inheritedUtm) {
      utm = { ...utm, ...inheritedUtm.utm };
      adIds = { ...inheritedUtm.ad_ids };
    }
    const resolution = resolveAd(
      {
        utm_ad_id: adIds.ad_id,
        meta_ad_id: adIds.meta_ad_id,
        utm_content: utm.content,
        utm_campaign: utm.campaign,
        campaign_name: e.campaign_name,
      },
      index,
    );
    const resolvedAd = resolution.method === "unresolved" ? null : resolution.ad;
    rows.push({
      id: e.id,
      contact_id: contactId,
      event_type: e.event_type,
      event_subtype: e.event_subtype ?? null,
      event_datetime: e.event_datetime,
      contact_email: c.email ?? e.contact_email ?? null,
      contact_name: e.contact_name ?? null,
      contact_phone: e.contact_phone ?? null,
      value: e.value ?? null,
      amount: e.amount ?? null,
      currency: e.currency ?? null,
      product_key: e.product_key ?? null,
      product_name: e.product_name ?? null,
      assigned_user_name: e.assigned_user_name ?? null,
      is_paid: e.is_paid ?? null,
      payment_status: e.payment_status ?? null,
      booking_date: e.booking_date ?? null,
      booking_time: e.booking_time ?? null,
      utm_source: utm.source ?? null,
      utm_medium: utm.medium ?? null,
      utm_campaign: utm.campaign ?? null,
      utm_content: utm.content ?? null,
      utm_term: utm.term ?? null,
      utm_campaign_id: adIds.campaign_id ?? null,
      utm_adset_id: adIds.adset_id ?? null,
      utm_ad_id: adIds.ad_id ?? null,
      campaign_name: e.campaign_name ?? null,
      calendar_name: e.calendar_name ?? null,
      meta_ad_id: adIds.meta_ad_id ?? null,
      is_baseline: e.is_baseline ?? false,
      cancelled_at: e.cancelled_at ?? null,
      origin: options.origin,
      payload_hash: c.hash,
      utm_enriched: inheritedUtm !== null,
      resolution: resolution.method,
      resolved_platform: resolvedAd?.platform ?? null,
      resolved_ad_id: resolvedAd?.ad_id ?? null,
    });
    touches.push({
      eventId: e.id,
      contactId,
      eventType: e.event_type,
      occurredAt: e.event_datetime,
      utm,
      adIds,
      isPaid: resolvedAd !== null || Boolean(adIds.ad_id || adIds.meta_ad_id),
      value: e.amount ?? e.value ?? null,
      currency: e.currency ?? null,
      product: e.product_key ?? null,
      isImported: options.origin === "import",
      resolution: resolution.method,
      resolvedPlatform: resolvedAd?.platform ?? null,
      resolvedAdId: resolvedAd?.ad_id ?? null,
    });
  }

  // The touchpoints first: the events' ad of record (a trigger, as each is written) then sees the
  // batch's own ad touches, and the touchpoints' refresh of it finds none of the batch's events to
  // correct — one write per event instead of an insert and an update (migration 0028).
  await upsertConversionTouchpoints(tx, accountId, { touches });
  const outcomes = await upsertEvents(tx, accountId, { events: rows });
  result.unchanged += rows.length - outcomes.size;
  for (const outcome of outcomes.values()) result[outcome] += 1;
  for (const row of rows) byId.set(row.id, outcomes.get(row.id) ?? "unchanged");

  const saleContacts = new Set<string>();
  let uncontactedSale = false;
  for (const row of rows) {
    if (!outcomes.has(row.id) || (row.event_type !== "sale" && row.event_type !== "payment")) continue;
    if (row.contact_id) saleContacts.add(row.contact_id);
    else uncontactedSale = true;
  }
  if (uncontactedSale) await recomputeSaleCounts(tx, accountId);
  else if (saleContacts.size > 0) await recomputeSaleCounts(tx, accountId, { contactIds: [...saleContacts] });
  return { result, byId };
}
