import type { FastifyInstance } from "fastify";
import type StripeSdk from "stripe";
import { ApiError } from "../http/errors.ts";
import { createGroupCommit, refusedByData } from "../ingest/group-commit.ts";
import { type HookDeps, type HookVerdict, registerConnectorHookRoute } from "./hook-route.ts";
import { stripeAction } from "./stripe-events.ts";
import { type StripeDelivery, type StripeOutcome, storeStripeDeliveries } from "./stripe-store.ts";

/** https://docs.stripe.com/webhooks#verify-events: Stripe's own default, named by the issue. */
export const STRIPE_TOLERANCE_SECONDS = 300;

export type StripeHookDeps = HookDeps;

/** The SDK is large: loaded with the first Stripe delivery, not at start. */
let sdk: Promise<typeof StripeSdk> | null = null;
const stripeSdk = () => {
  sdk ??= import("stripe").then((m) => m.default);
  return sdk;
};

/** Why the SDK refused a signature, in the words `connectors test` shows (never the header itself). */
function signatureReason(err: unknown): string {
  const message = err instanceof Error ? err.message : "";
  if (/tolerance/i.test(message)) return "stale";
  if (/extract timestamp/i.test(message)) return "malformed";
  return "mismatch";
}

/**
 * `POST {site_url}/api/hooks/stripe/<connector id>`: Stripe's webhook deliveries for one connector
 * (docs/connectors.md), through the steps every vendor hook shares (hook-route.ts). The signature
 * (`Stripe-Signature`) is checked by the official SDK on the raw body against the connector's own
 * signing secret before anything is read or written.
 */
export function registerStripeHookRoute(app: FastifyInstance, deps: StripeHookDeps): void {
  // Deliveries of one account that arrive together are stored together: one transaction whose
  // statements (and their maintenance triggers) serve the whole batch. A delivery the ingest refuses
  // (ApiError) is found by splitting the batch and fails alone.
  const writer = createGroupCommit<StripeDelivery, StripeOutcome>(
    (accountId, deliveries) =>
      deps.db.tenant(accountId, (tx) =>
        storeStripeDeliveries(tx, accountId, deliveries, deps.secrets, deps.adIndexes),
      ),
    { refusedByItems: (err) => err instanceof ApiError || refusedByData(err), maxBatch: 100 },
  );

  registerConnectorHookRoute<StripeSdk.Event>(app, deps, {
    kind: "stripe",
    vendor: "Stripe",
    async verify(request, raw, secret, now): Promise<HookVerdict<StripeSdk.Event>> {
      const header = request.headers["stripe-signature"];
      if (typeof header !== "string") return { ok: false, reason: "missing" };
      const Stripe = await stripeSdk();
      try {
        const event = Stripe.webhooks.constructEvent(
          raw,
          header,
          secret,
          STRIPE_TOLERANCE_SECONDS,
          undefined,
          now.getTime(),
        );
        return { ok: true, delivery: event };
      } catch (err) {
        return { ok: false, reason: signatureReason(err) };
      }
    },
    async store(accountId, { connectorId, delivery: event, at }) {
      const action = stripeAction({
        id: event.id,
        type: event.type,
        created: event.created,
        object: event.data.object as unknown as Record<string, unknown>,
      });
      const outcome = await writer.submit(accountId, { connectorId, deliveryId: event.id, action, at });
      return {
        duplicate: outcome.outcome === "duplicate",
        data: { received: event.id, type: event.type, ...outcome },
      };
    },
    label: (event) => `${event.type} ${event.id}`,
  });
}
