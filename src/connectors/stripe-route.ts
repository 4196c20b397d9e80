import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type StripeSdk from "stripe";
import { connectorSecretContext } from "../admin/connectors.ts";
import { type SecretBox, SecretBoxError } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { failedAuthThrottle } from "../http/failed-auth.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import { createGroupCommit, refusedByData } from "../ingest/group-commit.ts";
import { connectorAccount } from "../queries/connector-account.ts";
import { connectorSealedSecret } from "../queries/connector-secret.ts";
import { recordConnectorOutcome } from "../queries/record-connector-outcome.ts";
import { stripeAction } from "./stripe-events.ts";
import { type StripeDelivery, type StripeOutcome, storeStripeDeliveries } from "./stripe-store.ts";

export const STRIPE_HOOK_PATH = "/api/hooks/stripe/:connectorId";
/** https://docs.stripe.com/webhooks#verify-events: Stripe's own default, named by the issue. */
export const STRIPE_TOLERANCE_SECONDS = 300;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** No account has this id: the connector's account is not known yet when it is looked up. */
const NO_ACCOUNT = "00000000-0000-0000-0000-000000000000";

export interface StripeHookDeps {
  db: Database;
  secrets: SecretBox;
  counters: CounterStore;
  clock: () => Date;
}

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
 * (docs/connectors.md). The signature (`Stripe-Signature`) is checked by the official SDK on the raw
 * body against the connector's own signing secret before anything is read or written. Answers:
 * 200 taken (or acknowledged: a resent delivery, an event type not used); 401 invalid_signature,
 * nothing stored; 404 not_found for an id that is no Stripe connector (also counted as a failed
 * attempt, so ids cannot be probed faster than keys).
 */
export function registerStripeHookRoute(app: FastifyInstance, deps: StripeHookDeps): void {
  // Deliveries of one account that arrive together are stored together: one transaction whose
  // statements (and their maintenance triggers) serve the whole batch. A delivery the ingest refuses
  // (ApiError) is found by splitting the batch and fails alone.
  const writer = createGroupCommit<StripeDelivery, StripeOutcome>(
    (accountId, deliveries) =>
      deps.db.tenant(accountId, (tx) => storeStripeDeliveries(tx, accountId, deliveries, deps.secrets)),
    { refusedByItems: (err) => err instanceof ApiError || refusedByData(err), maxBatch: 100 },
  );

  const refuse = async (request: FastifyRequest, reply: FastifyReply, error: ApiError) => {
    throw await failedAuthThrottle(deps.counters, request.ip).fail(reply, error);
  };

  app.post(STRIPE_HOOK_PATH, async (request, reply) => {
    await failedAuthThrottle(deps.counters, request.ip).gate(reply);
    const { connectorId } = request.params as { connectorId: string };
    const unknown = new ApiError("not_found", {}, "no Stripe connector has this id");
    if (!UUID.test(connectorId)) return refuse(request, reply, unknown);
    const accountId = await deps.db.read(NO_ACCOUNT, (tx) =>
      connectorAccount(tx, { id: connectorId, kind: "stripe" }),
    );
    if (!accountId) return refuse(request, reply, unknown);

    const noteError = (error: string) =>
      deps.db.tenant(accountId, (tx) =>
        recordConnectorOutcome(tx, accountId, { connectorId, at: deps.clock(), error }),
      );

    const noteEvent = () =>
      deps.db.tenant(accountId, (tx) =>
        recordConnectorOutcome(tx, accountId, { connectorId, at: deps.clock(), error: null }),
      );

    const sealed = await deps.db.read(accountId, (tx) =>
      connectorSealedSecret(tx, accountId, { id: connectorId }),
    );
    let secret: string | null = null;
    try {
      secret = sealed ? deps.secrets.open(sealed, connectorSecretContext(accountId, connectorId)) : null;
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
    }
    if (!secret) {
      await noteError("signing secret unreadable (SECRET_KEYS changed?): every delivery is refused");
      return refuse(request, reply, new ApiError("invalid_signature", { reason: "no_secret" }));
    }

    const raw = typeof request.body === "string" ? request.body : "";
    const header = request.headers["stripe-signature"];
    const Stripe = await stripeSdk();
    let event: StripeSdk.Event;
    try {
      if (typeof header !== "string") throw new Error("No signatures found");
      event = Stripe.webhooks.constructEvent(
        raw,
        header,
        secret,
        STRIPE_TOLERANCE_SECONDS,
        undefined,
        deps.clock().getTime(),
      );
    } catch (err) {
      const reason = typeof header === "string" ? signatureReason(err) : "missing";
      await noteError(`signature ${reason}`);
      return refuse(request, reply, new ApiError("invalid_signature", { reason }));
    }

    const action = stripeAction({
      id: event.id,
      type: event.type,
      created: event.created,
      object: event.data.object as unknown as Record<string, unknown>,
    });
    try {
      const outcome = await writer.submit(accountId, {
        connectorId,
        deliveryId: event.id,
        action,
        at: deps.clock(),
      });
      // After the commit, on its own: inside the delivery's transaction, the connector's row stayed
      // locked until its commit and concurrent deliveries queued behind it (10 connections: 15
      // deliveries/s, nearly all of them waiting on that lock).
      if (outcome.outcome !== "duplicate") await noteEvent();
      return { data: { received: event.id, type: event.type, ...outcome } };
    } catch (err) {
      if (err instanceof ApiError) await noteError(`${event.type} ${event.id}: ${err.message}`);
      throw err;
    }
  });
}
