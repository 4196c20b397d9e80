import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import { resolveAd } from "../attribution/ad-resolution.ts";
import type { Sql } from "../db/client.ts";
import {
  adoptVisitors,
  type BatchedWebTouch,
  insertWebTouchpoints,
} from "../queries/insert-web-touchpoint.ts";
import { type OpenedBeaconBatch, openBeaconBatch } from "../queries/open-beacon-batch.ts";
import { type ContactFacts, identityOf, resolveContacts } from "../queries/resolve-contacts.ts";
import { type Beacon, isAdTouch } from "./beacon.ts";
import { contactKey, normalizeEmail, normalizePhone } from "./identity.ts";

/** A beacon as the writer received it. */
export interface Received {
  beacon: Beacon;
  receivedAt: Date;
}

/**
 * Writes a batch of one account's beacons in the caller's transaction: the beacons not stored before,
 * as if one after the other, in arrival order. A resent beacon — one whose id the account already
 * holds, or a later copy in the same batch — stops at the batch's opening statement, before it
 * touches a contact or a touchpoint; the claim of its id commits or rolls back with the beacons'
 * own writes.
 */
export async function writeBeaconBatch(
  tx: Sql,
  accountId: string,
  batch: readonly Received[],
  adIndexes: AdIndexCache,
): Promise<void> {
  const opened = await openBeaconBatch(tx, accountId, {
    receipts: batch.flatMap(({ beacon, receivedAt }) =>
      beacon.id ? [{ beaconId: beacon.id, receivedAt }] : [],
    ),
    // Asked of every visitor with a contact in the batch, a resent beacon's too: one statement.
    visitorIds: [...new Set(batch.filter((p) => p.beacon.contact).map((p) => p.beacon.visitor_id))],
  });
  // `delete` is true once per claimed id: its first copy in the batch is written, later ones are not.
  const unseen = batch.filter(({ beacon }) => beacon.id === undefined || opened.claimed.delete(beacon.id));
  await writeBeacons(tx, accountId, unseen, opened, adIndexes);
}

function contactFacts(beacon: Beacon): ContactFacts | null {
  if (!beacon.contact) return null;
  const email = normalizeEmail(beacon.contact.email);
  const phone = normalizePhone(beacon.contact.phone);
  const key = contactKey(email, phone);
  if (!key) return null;
  const name =
    beacon.contact.name ??
    ([beacon.contact.first_name, beacon.contact.last_name].filter(Boolean).join(" ") || null);
  return { key, email, phone, name, formTitles: beacon.form?.title ? [beacon.form.title] : [] };
}

/**
 * What a beacon writes that another batch of its account may write too: its visitor's touchpoints
 * (adopted, or looked up for their contact) and its contact (matched, created, given form titles).
 * Two batches in flight never share one (group-commit.ts `keysOf`), so neither misses what the other
 * has not committed yet — a visitor's form in one and its page view in the other — nor creates the
 * same phone-only contact, which no unique index guards.
 */
export function beaconKeys(beacon: Beacon): string[] {
  const facts = contactFacts(beacon);
  return facts
    ? [`visitor:${beacon.visitor_id}`, `contact:${identityOf(facts)}`]
    : [`visitor:${beacon.visitor_id}`];
}

/**
 * Writes a batch of one account's beacons as if one after the other, in arrival order: a beacon with
 * a contact makes its visitor that contact (earlier touchpoints of the visitor without a contact
 * join it, in the database and in the batch), and a beacon without one takes its visitor's latest
 * contact.
 */
async function writeBeacons(
  tx: Sql,
  accountId: string,
  batch: readonly Received[],
  opened: OpenedBeaconBatch,
  adIndexes: AdIndexCache,
): Promise<void> {
  if (batch.length === 0) return;
  const facts = batch.map((p) => contactFacts(p.beacon));
  const known = facts.filter((f): f is ContactFacts => f !== null);
  const contactIds = known.length > 0 ? await resolveContacts(tx, accountId, { facts: known }) : new Map();

  // Visitors that become a contact in this batch: what they were before decides, beacon by beacon,
  // which of their touches the new contact adopts.
  const becoming = new Set<string>();
  facts.forEach((f, i) => {
    if (f) becoming.add(batch[i]?.beacon.visitor_id ?? "");
  });
  const { contacts: before, anonymous } = opened.visitors;

  const current = new Map<string, string | null>();
  const orphans = new Map<string, number[]>();
  const adoptions = new Map<string, string>();
  const contactOf: (string | null)[] = [];
  batch.forEach(({ beacon }, i) => {
    const visitor = beacon.visitor_id;
    const f = facts[i];
    if (f) {
      const contactId = contactIds.get(identityOf(f)) as string;
      contactOf.push(contactId);
      if (!adoptions.has(visitor)) adoptions.set(visitor, contactId);
      for (const j of orphans.get(visitor) ?? []) contactOf[j] = contactId;
      orphans.delete(visitor);
      current.set(visitor, contactId);
    } else if (becoming.has(visitor)) {
      const contactId = current.has(visitor) ? (current.get(visitor) ?? null) : (before.get(visitor) ?? null);
      current.set(visitor, contactId);
      contactOf.push(contactId);
      if (contactId === null) orphans.set(visitor, [...(orphans.get(visitor) ?? []), i]);
    } else {
      // Looked up by the insert itself.
      contactOf.push(null);
    }
  });
  // Only visitors with anonymous touchpoints stored: an UPDATE that changes nothing still costs its
  // statement triggers.
  await adoptVisitors(tx, accountId, {
    adoptions: [...adoptions]
      .filter(([visitorId]) => anonymous.has(visitorId))
      .map(([visitorId, contactId]) => ({ visitorId, contactId })),
  });

  const hasSignal = (b: Beacon) => Boolean(b.ad_ids?.ad_id || b.ad_ids?.meta_ad_id || b.utm?.content);
  const index = batch.some((p) => hasSignal(p.beacon))
    ? await adIndexes.get(tx, accountId, opened.adCatalogVersion)
    : null;
  const touches: BatchedWebTouch[] = batch.map(({ beacon, receivedAt }, i) => {
    const utm = beacon.utm ?? {};
    const adIds = beacon.ad_ids ?? {};
    const resolution =
      index && hasSignal(beacon)
        ? resolveAd(
            {
              utm_ad_id: adIds.ad_id,
              meta_ad_id: adIds.meta_ad_id,
              utm_content: utm.content,
              utm_campaign: utm.campaign,
            },
            index,
          )
        : null;
    const ad = resolution && resolution.method !== "unresolved" ? resolution.ad : null;
    return {
      externalId: beacon.id ? `beacon:${beacon.id}` : null,
      contactId: contactOf[i] ?? null,
      lookUpContact: !becoming.has(beacon.visitor_id),
      visitorId: beacon.visitor_id,
      sessionId: beacon.session_id ?? null,
      kind: beacon.type === "page_view" ? "web" : "conversion",
      eventType: beacon.type,
      // The server's clock: visitors' clocks drift.
      occurredAt: receivedAt,
      url: beacon.url,
      referrer: beacon.referrer || null,
      utm,
      adIds,
      clickIds: beacon.click_ids ?? {},
      channel: utm.channel ?? null,
      isPaid: isAdTouch(beacon),
      resolution: resolution?.method ?? "unresolved",
      resolvedPlatform: ad?.platform ?? null,
      resolvedAdId: ad?.ad_id ?? null,
    };
  });
  await insertWebTouchpoints(tx, accountId, touches);
}
