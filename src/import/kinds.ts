import type { z } from "zod";
import { buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Sql } from "../db/client.ts";
import { isPaidMedium } from "../ingest/beacon.ts";
import { type CrmEvent, crmEventSchema } from "../ingest/crm-event.ts";
import { contactKey, normalizeEmail } from "../ingest/identity.ts";
import {
  type CallRecord,
  type CreativeRequestRecord,
  callRecordSchema,
  creativeRequestRecordSchema,
  type PixelRecord,
  type PurchaseRecord,
  pixelRecordSchema,
  purchaseRecordSchema,
  type RuleRecord,
  ruleRecordSchema,
  type TouchpointRecord,
  touchpointRecordSchema,
} from "../ingest/import-records.ts";
import { ingestCrmEvents } from "../ingest/ingest-events.ts";
import { type SpendRow, spendRowSchema } from "../ingest/spend-row.ts";
import { knownAds } from "../queries/known-ads.ts";
import {
  type ContactFacts,
  findOrCreateContact,
  identityOf,
  resolveContacts,
} from "../queries/resolve-contacts.ts";
import {
  pixelToken,
  upsertCall,
  upsertCreativeRequest,
  upsertImportedTouchpoint,
  upsertPixel,
  upsertRule,
} from "../queries/upsert-import-records.ts";
import { upsertPurchases } from "../queries/upsert-purchases.ts";
import { upsertSpend } from "../queries/upsert-spend.ts";

export interface BatchResult {
  imported: number;
  updated: number;
  skipped: number;
  /** Ads created or renamed: what was resolved against the old ads is resolved again at the end. */
  adsChanged?: number;
}

/** One kind of import: how a record is validated, what names it, and how a batch is written. */
export interface ImportKind<R> {
  schema: z.ZodObject;
  /** The record's stable external identity: a replay of it updates instead of duplicating. */
  identity(record: R): string;
  write(tx: Sql, accountId: string, records: R[], context: { secrets: SecretBox }): Promise<BatchResult>;
  /** Records per transaction, when the kind's writer is set-based and gains from bigger batches. */
  batchSize?: number;
  /**
   * What two batches written at once must not share besides the identity (the contact whose
   * milestones, activity and sales a record's write recomputes); null: everything (the record's
   * write touches the whole account). Absent: the kind's batches are written one at a time.
   */
  conflictKeys?(record: R): readonly string[] | null;
}

const events: ImportKind<CrmEvent> = {
  schema: crmEventSchema,
  identity: (e) => e.id,
  // Set-based (a fixed number of statements per batch): bigger batches cost fewer round trips.
  batchSize: 5_000,
  conflictKeys: (e) => {
    // The identity ingest-events.ts resolves the contact by (contactKey normalizes both).
    const contact = contactKey(e.contact_email ?? null, e.contact_phone ?? null);
    if (contact) return [`contact:${contact.kind}:${contact.key}`];
    // A sale without a contact has the whole account's sales counted again (ingest-events.ts).
    return e.event_type === "sale" || e.event_type === "payment" ? null : [];
  },
  async write(tx, accountId, records) {
    const r = await ingestCrmEvents(tx, accountId, records, { origin: "import" });
    return { imported: r.inserted, updated: r.updated, skipped: r.unchanged };
  },
};

const spend: ImportKind<SpendRow> = {
  schema: spendRowSchema,
  identity: (s) => `${s.platform}\u0000${s.ad_id}\u0000${s.date}`,
  async write(tx, accountId, records) {
    const r = await upsertSpend(tx, accountId, { rows: records });
    return {
      imported: r.inserted,
      updated: r.updated,
      skipped: records.length - r.inserted - r.updated,
      adsChanged: r.adsChanged,
    };
  },
};

const purchases: ImportKind<PurchaseRecord> = {
  schema: purchaseRecordSchema,
  identity: (p) => p.id,
  async write(tx, accountId, records) {
    const facts = records.map((record) => {
      const email = normalizeEmail(record.contact_email) ?? "";
      return {
        key: { kind: "email" as const, key: email },
        email,
        phone: null,
        name: record.contact_name ?? null,
      };
    });
    const contacts = await resolveContacts(tx, accountId, { facts });
    const outcomes = await upsertPurchases(tx, accountId, {
      purchases: records.map((record, i) => {
        const contactId = contacts.get(identityOf(facts[i] as ContactFacts));
        if (!contactId) throw new Error("contact could not be resolved");
        return { record, contactId };
      }),
    });
    let imported = 0;
    let updated = 0;
    for (const outcome of outcomes.values()) {
      if (outcome === "inserted") imported += 1;
      else if (outcome === "updated") updated += 1;
    }
    return { imported, updated, skipped: records.length - imported - updated };
  },
};

const touchpoints: ImportKind<TouchpointRecord> = {
  schema: touchpointRecordSchema,
  identity: (t) => t.id,
  async write(tx, accountId, records) {
    const result: BatchResult = { imported: 0, updated: 0, skipped: 0 };
    const index = buildAdIndex(await knownAds(tx, accountId));
    for (const t of records) {
      const email = normalizeEmail(t.email);
      const contactId = email
        ? await findOrCreateContact(tx, accountId, {
            key: { kind: "email", key: email },
            email,
            phone: null,
            name: null,
          })
        : null;
      const defined = (entries: Record<string, string | null | undefined>) =>
        Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => Boolean(e[1])));
      const utm = defined({
        source: t.utm_source,
        medium: t.utm_medium,
        campaign: t.utm_campaign,
        content: t.utm_content,
        term: t.utm_term,
        campaign_name: t.campaign_name,
        adset_name: t.adset_name,
        ad_name: t.ad_name,
        channel: t.channel,
      });
      const adIds = defined({
        ad_id: t.ad_id,
        adset_id: t.adset_id,
        campaign_id: t.campaign_id,
        meta_ad_id: t.meta_ad_id,
      });
      const clickIds = defined({ gclid: t.gclid, fbclid: t.fbclid, ttclid: t.ttclid });
      const resolution = resolveAd(
        {
          utm_ad_id: t.ad_id,
          meta_ad_id: t.meta_ad_id,
          utm_content: t.utm_content,
          utm_campaign: t.utm_campaign,
          campaign_name: t.campaign_name,
        },
        index,
      );
      const ad = resolution.method === "unresolved" ? null : resolution.ad;
      const isPaid =
        t.is_paid ??
        (Object.keys(adIds).length > 0 || Object.keys(clickIds).length > 0 || isPaidMedium(t.utm_medium));
      tally(
        result,
        await upsertImportedTouchpoint(tx, accountId, {
          externalId: t.id,
          contactId,
          visitorId: t.visitor_id ?? null,
          sessionId: t.session_id ?? null,
          kind: t.kind,
          eventType: t.event_type,
          occurredAt: t.occurred_at,
          url: t.url ?? null,
          referrer: t.referrer ?? null,
          utm,
          adIds,
          clickIds,
          channel: t.channel ?? null,
          isPaid,
          value: t.value ?? null,
          currency: t.currency ?? null,
          product: t.product ?? null,
          resolution: resolution.method,
          resolvedPlatform: ad?.platform ?? null,
          resolvedAdId: ad?.ad_id ?? null,
        }),
      );
    }
    return result;
  },
};

const creativeRequests: ImportKind<CreativeRequestRecord> = {
  schema: creativeRequestRecordSchema,
  identity: (r) => r.id,
  write: oneByOne(upsertCreativeRequest),
};

const rules: ImportKind<RuleRecord> = {
  schema: ruleRecordSchema,
  identity: (r) => r.id,
  write: oneByOne(upsertRule),
};

const pixels: ImportKind<PixelRecord> = {
  schema: pixelRecordSchema,
  identity: (p) => `${p.platform}\u0000${p.pixel_id}`,
  async write(tx, accountId, records, { secrets }) {
    const result: BatchResult = { imported: 0, updated: 0, skipped: 0 };
    for (const p of records) {
      const context = `pixel:${accountId}:${p.platform}:${p.pixel_id}`;
      const stored = await pixelToken(tx, accountId, { platform: p.platform, pixelId: p.pixel_id });
      // The same token again keeps its seal: a replay writes nothing.
      const sameToken = stored !== null && p.access_token && secrets.open(stored, context) === p.access_token;
      const sealedToken = p.access_token
        ? sameToken
          ? stored
          : secrets.seal(p.access_token, context)
        : null;
      tally(
        result,
        await upsertPixel(tx, accountId, {
          platform: p.platform,
          pixelId: p.pixel_id,
          name: p.name ?? null,
          isDefault: p.is_default ?? false,
          sealedToken,
          routing: p.routing ?? {},
        }),
      );
    }
    return result;
  },
};

const calls: ImportKind<CallRecord> = {
  schema: callRecordSchema,
  identity: (c) => c.id,
  write: oneByOne(upsertCall),
};

/** A writer for kinds stored one record at a time. */
function oneByOne<R>(upsert: (tx: Sql, accountId: string, record: R) => Promise<Outcome>) {
  return async (tx: Sql, accountId: string, records: R[]): Promise<BatchResult> => {
    const result: BatchResult = { imported: 0, updated: 0, skipped: 0 };
    for (const record of records) tally(result, await upsert(tx, accountId, record));
    return result;
  };
}

type Outcome = "inserted" | "updated" | "unchanged";

function tally(result: BatchResult, outcome: Outcome): void {
  if (outcome === "inserted") result.imported += 1;
  else if (outcome === "updated") result.updated += 1;
  else result.skipped += 1;
}

/** The kinds of CONTRACT.md's `ascribe import`. */
export const importKinds = {
  events,
  spend,
  touchpoints,
  purchases,
  "creative-requests": creativeRequests,
  rules,
  calls,
  pixels,
} as const;

export type ImportKindName = keyof typeof importKinds;

export function isImportKind(name: string): name is ImportKindName {
  return Object.hasOwn(importKinds, name);
}
