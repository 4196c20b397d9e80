import type { FastifyInstance, FastifyRequest } from "fastify";
import { buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import type { Database } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { validationMessage } from "../http/pipeline.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import { accountByClientKey } from "../queries/account-by-client-key.ts";
import { accountByHost } from "../queries/account-by-host.ts";
import {
  addFormTitle,
  adoptVisitor,
  contactOfVisitor,
  insertWebTouchpoint,
} from "../queries/insert-web-touchpoint.ts";
import { knownAds } from "../queries/known-ads.ts";
import { findOrCreateContact } from "../queries/resolve-contacts.ts";
import { beaconSchema, isAdTouch } from "./beacon.ts";
import { contactKey, normalizeEmail, normalizePhone } from "./identity.ts";

export const COLLECT_PATH = "/api/collect";
export const COLLECT_BODY_LIMIT = 16 * 1024;
/** A flood from one address, or against one account, cannot starve the API. */
export const COLLECT_LIMITS = { perIp: 600, perAccount: 60_000 };
const WINDOW_MS = 60_000;

export interface CollectDeps {
  db: Database;
  counters: CounterStore;
  clock: () => Date;
}

function requestHost(request: FastifyRequest): string {
  return (request.headers.host ?? "").toLowerCase().replace(/:\d+$/, "");
}

/**
 * `POST {site_url}/api/collect`: the tracking script's beacons (page view, form submission, booking),
 * `text/plain` or JSON, at most 16 KB. Answers 204 only after the write commits.
 */
export function registerCollectRoute(app: FastifyInstance, deps: CollectDeps): void {
  app.post(COLLECT_PATH, { bodyLimit: COLLECT_BODY_LIMIT }, async (request, reply) => {
    const byIp = await deps.counters.hit(`collect-ip:${request.ip}`, WINDOW_MS);
    if (byIp.count > COLLECT_LIMITS.perIp) throw new ApiError("rate_limited", { retry_after_seconds: 60 });

    let body: unknown;
    try {
      body = JSON.parse(typeof request.body === "string" ? request.body : "");
    } catch {
      throw ApiError.validation("body is not valid JSON");
    }
    const parsed = beaconSchema.safeParse(body);
    if (!parsed.success) throw ApiError.validation(validationMessage(parsed.error));
    const beacon = parsed.data;

    const host = requestHost(request);
    const accountId = beacon.client_key
      ? (
          await deps.db.clientKeyLookup(beacon.client_key, (tx) =>
            accountByClientKey(tx, beacon.client_key ?? ""),
          )
        )?.id
      : /^[a-z0-9.-]{1,253}$/.test(host)
        ? await deps.db.hostLookup(host, (tx) => accountByHost(tx, host))
        : null;
    if (!accountId)
      throw ApiError.validation("client_key: unknown client key (or unregistered tracking host)");

    const byAccount = await deps.counters.hit(`collect-account:${accountId}`, WINDOW_MS);
    if (byAccount.count > COLLECT_LIMITS.perAccount)
      throw new ApiError("rate_limited", { retry_after_seconds: 60 });

    const now = deps.clock();
    await deps.db.tenant(accountId, async (tx) => {
      let contactId: string | null = null;
      if (beacon.contact) {
        const email = normalizeEmail(beacon.contact.email);
        const phone = normalizePhone(beacon.contact.phone);
        const key = contactKey(email, phone);
        const name =
          beacon.contact.name ??
          ([beacon.contact.first_name, beacon.contact.last_name].filter(Boolean).join(" ") || null);
        if (key) {
          contactId = await findOrCreateContact(tx, accountId, { key, email, phone, name });
          await adoptVisitor(tx, accountId, { visitorId: beacon.visitor_id, contactId });
          if (beacon.form?.title) await addFormTitle(tx, accountId, { contactId, title: beacon.form.title });
        }
      }
      contactId ??= await contactOfVisitor(tx, accountId, { visitorId: beacon.visitor_id });

      const utm = beacon.utm ?? {};
      const adIds = beacon.ad_ids ?? {};
      const hasSignal = Boolean(adIds.ad_id || adIds.meta_ad_id || utm.content);
      const resolution = hasSignal
        ? resolveAd(
            {
              utm_ad_id: adIds.ad_id,
              meta_ad_id: adIds.meta_ad_id,
              utm_content: utm.content,
              utm_campaign: utm.campaign,
            },
            buildAdIndex(await knownAds(tx, accountId)),
          )
        : null;
      const ad = resolution && resolution.method !== "unresolved" ? resolution.ad : null;
      await insertWebTouchpoint(tx, accountId, {
        externalId: beacon.id ? `beacon:${beacon.id}` : null,
        contactId,
        visitorId: beacon.visitor_id,
        sessionId: beacon.session_id ?? null,
        kind: beacon.type === "page_view" ? "web" : "conversion",
        eventType: beacon.type,
        // The server's clock: visitors' clocks drift.
        occurredAt: now,
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
      });
    });
    return reply.status(204).send();
  });
}
