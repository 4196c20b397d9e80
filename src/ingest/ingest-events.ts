import { createHash } from "node:crypto";
import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import { buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import type { Sql } from "../db/client.ts";
import { knownAds } from "../queries/known-ads.ts";
import { latestWebUtm } from "../queries/latest-web-utm.ts";
import type { ContactFacts } from "../queries/resolve-contacts.ts";
import { identityOf, resolveContacts } from "../queries/resolve-contacts.ts";
import type { SaleEventRow } from "../queries/sale-events.ts";
import { saleRule } from "../queries/sale-rule.ts";
import type { SaleVerdict } from "../queries/update-sale-counts.ts";
import {
  type ConversionTouch,
  upsertConversionTouchpoints,
} from "../queries/upsert-conversion-touchpoint.ts";
import {
  type EventRecord,
  type EventSaleCount,
  storedEvents,
  upsertEvents,
} from "../queries/upsert-event.ts";
import type { CrmEvent } from "./crm-event.ts";
import { contactKey, normalizeEmail, normalizePhone } from "./identity.ts";
import { predictSaleCounts, recomputeSaleCounts } from "./recompute-sale-counts.ts";

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

const isSaleType = (type: string): boolean => type === "sale" || type === "payment";

/** A received sale or payment as sale counting reads a stored one (sale-events.ts). */
function saleEventOf(e: CrmEvent, contactId: string): SaleEventRow & { contact_id: string } {
  return {
    id: e.id,
    contact_id: contactId,
    event_type: e.event_type === "payment" ? "payment" : "sale",
    at: Date.parse(e.event_datetime),
    product_key: e.product_key ?? null,
    amount: e.amount ?? null,
    value: e.value ?? null,
    is_paid: e.is_paid ?? null,
    payment_status: e.payment_status ?? null,
    is_baseline: e.is_baseline ?? false,
    cancelled: e.cancelled_at !== null && e.cancelled_at !== undefined,
  };
}

function saleCountColumns(v: SaleVerdict | undefined): EventSaleCount {
  return {
    counted: v?.counted ?? null,
    drop_reason: v?.drop_reason ?? null,
    group_key: v?.group_key ?? null,
    contact_seq: v?.contact_seq ?? null,
    group_revenue: v?.group_revenue ?? null,
    group_refunds: v?.group_refunds ?? null,
    group_disputes: v?.group_disputes ?? null,
  };
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
export interface IngestOptions {
  origin: EventOrigin;
  /**
   * The serving process's ad indexes, checked against the catalog's version (one row) instead of
   * every ad read and indexed again: a webhook's single event on an account of thousands of ads.
   * Without it (an import's large batches, the CLI), the index is built for the call.
   */
  adIndexes?: AdIndexCache;
}

export async function ingestCrmEvents(
  tx: Sql,
  accountId: string,
  input: readonly CrmEvent[],
  options: IngestOptions,
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
  options: IngestOptions,
): Promise<{ result: IngestResult; byId: Map<string, EventOutcome> }> {
  const result: IngestResult = { inserted: 0, updated: 0, unchanged: 0 };
  const byId = new Map<string, EventOutcome>();
  if (input.length === 0) return { result, byId };
  const latest = new Map<string, CrmEvent>();
  for (const e of input) latest.set(e.id, e);
  result.unchanged += input.length - latest.size;
  const stored = await storedEvents(tx, accountId, { ids: [...latest.keys()] });

  // Only what changed goes further.
  const changed: { e: CrmEvent; hash: string; email: string | null; facts: ContactFacts | null }[] = [];
  for (const e of latest.values()) {
    const hash = payloadHash(e);
    if (stored.get(e.id)?.payload_hash === hash) {
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

  // Sale counting predicted, so that a new sale is written counted rather than updated after
  // (recompute-sale-counts.ts). A contact-less sale has the whole account recounted after the write.
  const sales: (SaleEventRow & { contact_id: string })[] = [];
  let salesWithoutContact = false;
  for (const c of changed) {
    if (!isSaleType(c.e.event_type)) continue;
    const contactId = contactOf(c);
    if (contactId === null) salesWithoutContact = true;
    else sales.push(saleEventOf(c.e, contactId));
  }
  const rule = sales.length > 0 || salesWithoutContact ? await saleRule(tx, accountId) : undefined;
  const predicted =
    rule && sales.length > 0 && !salesWithoutContact
      ? await predictSaleCounts(tx, accountId, { sales, written: new Set(changed.map((c) => c.e.id)) }, rule)
      : new Map<string, SaleVerdict>();

  const index = options.adIndexes
    ? await options.adIndexes.get(tx, accountId)
    : buildAdIndex(await knownAds(tx, accountId));
  const rows: (EventRecord & EventSaleCount)[] = [];
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
      ...saleCountColumns(predicted.get(e.id)),
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

  // Recounted: the contacts of the sales written, and those of the sales a replacement changed
  // (into another type, or onto another contact). The old contact of a moved sale is the one recount
  // an import's lanes do not keep apart (they place records by their new contact,
  // import-lanes.ts): written beside a batch of that contact, its counting may miss that batch's
  // sales until its next write. Before, it was never counted again.
  const saleContacts = new Set<string>();
  let uncontactedSale = false;
  const recount = (contactId: string | null) => {
    if (contactId) saleContacts.add(contactId);
    else uncontactedSale = true;
  };
  for (const row of rows) {
    const outcome = outcomes.get(row.id);
    if (outcome === undefined) continue;
    if (isSaleType(row.event_type)) recount(row.contact_id);
    const before = outcome === "updated" ? stored.get(row.id) : undefined;
    if (before && isSaleType(before.event_type)) recount(before.contact_id);
  }
  if (uncontactedSale) await recomputeSaleCounts(tx, accountId, { rule });
  else if (saleContacts.size > 0) {
    await recomputeSaleCounts(tx, accountId, { contactIds: [...saleContacts], rule });
  }
  return { result, byId };
}
