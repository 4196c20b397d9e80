import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import { SIGNATURE_TOLERANCE_SECONDS, verifySignature } from "../ingest/webhook-signature.ts";
import { isObject, str } from "./booking-action.ts";
import { storeBookingDelivery } from "./booking-store.ts";
import { type CalendlyEnvelope, calendlyAction, calendlyDeliveryId } from "./calendly-events.ts";
import { type HookDeps, registerConnectorHookRoute } from "./hook-route.ts";

/**
 * Calendly signs as our own webhook does: `Calendly-Webhook-Signature: t=<unix>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>">` (https://developer.calendly.com/docs/webhooks/overview), so the
 * same check serves, timing-safe, with the same 300-s tolerance as Stripe's.
 */
export const CALENDLY_TOLERANCE_SECONDS = SIGNATURE_TOLERANCE_SECONDS;

/** A verified body that is not a Calendly envelope is the sender's mistake: 400, not a 401. */
export function calendlyEnvelope(raw: string): CalendlyEnvelope {
  const body = readJsonBody(raw);
  if (!body.ok) throw body.error;
  const v = body.value;
  if (!isObject(v) || !str(v.event) || !str(v.created_at) || !isObject(v.payload))
    throw ApiError.validation("body: a Calendly webhook carries event, created_at and payload");
  return { event: String(v.event), created_at: String(v.created_at), payload: v.payload };
}

/** `POST {site_url}/api/hooks/calendly/<connector id>` (docs/connectors.md "Calendly"). */
export function registerCalendlyHookRoute(app: FastifyInstance, deps: HookDeps): void {
  registerConnectorHookRoute(app, deps, {
    kind: "calendly",
    vendor: "Calendly",
    async verify(request, raw, secret, now) {
      const header = request.headers["calendly-webhook-signature"];
      const verdict = verifySignature(
        secret,
        raw,
        typeof header === "string" ? header : undefined,
        Math.floor(now.getTime() / 1000),
      );
      return verdict.ok ? { ok: true, delivery: calendlyEnvelope(raw) } : verdict;
    },
    async store(accountId, { connectorId, delivery, at }) {
      const outcome = await deps.db.tenant(accountId, (tx) =>
        storeBookingDelivery(
          tx,
          accountId,
          {
            connectorId,
            deliveryId: calendlyDeliveryId(delivery),
            at,
            actionIn: (timezone) => calendlyAction(delivery, timezone),
          },
          deps.adIndexes,
        ),
      );
      return {
        duplicate: outcome.outcome === "duplicate",
        data: { received: calendlyDeliveryId(delivery), type: delivery.event, ...outcome },
      };
    },
    label: (delivery) => `${delivery.event} ${str(delivery.payload.uri) ?? ""}`.trim(),
  });
}
