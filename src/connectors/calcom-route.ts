import { createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import { isObject, str } from "./booking-action.ts";
import { storeBookingDelivery } from "./booking-store.ts";
import { type CalcomEnvelope, calcomAction, calcomDeliveryId } from "./calcom-events.ts";
import { type HookDeps, type HookVerdict, registerConnectorHookRoute } from "./hook-route.ts";

/**
 * Cal.com's signature: `X-Cal-Signature-256: <hex HMAC-SHA256 of the raw body with the webhook's
 * secret>` (https://cal.com/docs/developing/guides/automation/webhooks, "Verifying the
 * authenticity"). It carries no timestamp, so there is no staleness to check: a replayed delivery is
 * a duplicate by its key (calcomDeliveryId), and changes nothing.
 */
export function verifyCalcomSignature(secret: string, raw: string, header: string | undefined) {
  if (!header) return { ok: false, reason: "missing" } as const;
  const given = header.trim().replace(/^sha256=/i, "");
  if (!/^[0-9a-f]{64}$/i.test(given)) return { ok: false, reason: "malformed" } as const;
  const expected = createHmac("sha256", secret).update(raw).digest();
  return timingSafeEqual(Buffer.from(given, "hex"), expected)
    ? ({ ok: true } as const)
    : ({ ok: false, reason: "mismatch" } as const);
}

/** A verified body that is not a Cal.com envelope is the sender's mistake: 400, not a 401. */
export function calcomEnvelope(raw: string): CalcomEnvelope {
  const body = readJsonBody(raw);
  if (!body.ok) throw body.error;
  const v = body.value;
  if (!isObject(v) || !str(v.triggerEvent) || !str(v.createdAt))
    throw ApiError.validation("body: a Cal.com webhook carries triggerEvent, createdAt and payload");
  // The form's "Ping test" may carry less than a booking: acknowledged, whatever its payload.
  const payload = isObject(v.payload) ? v.payload : {};
  return { triggerEvent: String(v.triggerEvent), createdAt: String(v.createdAt), payload };
}

/** `POST {site_url}/api/hooks/calcom/<connector id>` (docs/connectors.md "Cal.com"). */
export function registerCalcomHookRoute(app: FastifyInstance, deps: HookDeps): void {
  registerConnectorHookRoute(app, deps, {
    kind: "calcom",
    vendor: "Cal.com",
    async verify(request, raw, secret): Promise<HookVerdict<CalcomEnvelope>> {
      const header = request.headers["x-cal-signature-256"];
      const verdict = verifyCalcomSignature(secret, raw, typeof header === "string" ? header : undefined);
      return verdict.ok ? { ok: true, delivery: calcomEnvelope(raw) } : verdict;
    },
    async store(accountId, { connectorId, delivery, at }) {
      const outcome = await deps.db.tenant(accountId, (tx) =>
        storeBookingDelivery(
          tx,
          accountId,
          {
            connectorId,
            deliveryId: calcomDeliveryId(delivery),
            at,
            actionIn: (timezone) => calcomAction(delivery, timezone),
          },
          deps.adIndexes,
        ),
      );
      return {
        duplicate: outcome.outcome === "duplicate",
        data: { received: calcomDeliveryId(delivery), type: delivery.triggerEvent, ...outcome },
      };
    },
    label: (delivery) => `${delivery.triggerEvent} ${str(delivery.payload.uid) ?? ""}`.trim(),
  });
}
