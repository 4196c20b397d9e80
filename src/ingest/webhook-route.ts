import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { webhookSecret } from "../admin/webhook-secret.ts";
import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { failedAuthThrottle } from "../http/failed-auth.ts";
import { readJsonBody } from "../http/json-body.ts";
import { validationMessage } from "../http/pipeline.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import { accountByClientKey } from "../queries/account-by-client-key.ts";
import { crmEventSchema } from "./crm-event.ts";
import { ingestCrmEvents } from "./ingest-events.ts";
import { SIGNATURE_HEADER, verifySignature } from "./webhook-signature.ts";

export const WEBHOOK_EVENTS_PATH = "/api/webhook/events";
const CLIENT_KEY = /^ck_[A-Za-z0-9_-]{16}$/;
const MAX_EVENTS = 1000;

export interface WebhookDeps {
  db: Database;
  secrets: SecretBox;
  counters: CounterStore;
  clock: () => Date;
  /** The process's ad indexes (ingest-events.ts `IngestOptions`). */
  adIndexes: AdIndexCache;
}

const batchSchema = z.array(crmEventSchema).min(1).max(MAX_EVENTS);

/**
 * `POST {site_url}/api/webhook/events?client_key=…`: CRM events from a CRM, form or payment tool,
 * signed with the account's webhook secret (X-Ascribe-Signature). One event object or an array of
 * up to 1,000; all or nothing; 200 only after the write commits. Replays are harmless (idempotent by
 * event id).
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookDeps): void {
  const refuse = async (request: FastifyRequest, reply: FastifyReply, reason: string) => {
    throw await failedAuthThrottle(deps.counters, request.ip).fail(
      reply,
      new ApiError("invalid_signature", { reason }),
    );
  };

  app.post(WEBHOOK_EVENTS_PATH, async (request, reply) => {
    await failedAuthThrottle(deps.counters, request.ip).gate(reply);

    const clientKey = (request.query as Record<string, unknown>).client_key;
    if (typeof clientKey !== "string" || !CLIENT_KEY.test(clientKey))
      return refuse(request, reply, "unknown_client_key");
    const account = await deps.db.clientKeyLookup(clientKey, (tx) => accountByClientKey(tx, clientKey));
    if (!account) return refuse(request, reply, "unknown_client_key");
    const secret = await deps.db.tenant(account.id, (tx) => webhookSecret(tx, deps.secrets, account.id));
    if (!secret) return refuse(request, reply, "no_webhook_secret");

    const raw = typeof request.body === "string" ? request.body : "";
    const header = request.headers[SIGNATURE_HEADER];
    const verdict = verifySignature(
      secret,
      raw,
      typeof header === "string" ? header : undefined,
      Math.floor(deps.clock().getTime() / 1000),
    );
    if (!verdict.ok) return refuse(request, reply, verdict.reason);

    const json = readJsonBody(raw);
    if (!json.ok) throw json.error;
    const body = json.value;
    const single = !Array.isArray(body);
    const parsed = batchSchema.safeParse(single ? [body] : body);
    if (!parsed.success) {
      const message = validationMessage(parsed.error);
      // A single event's messages name its fields, not "[0].field".
      throw ApiError.validation(single ? message.replaceAll("[0].", "") : message);
    }
    const result = await deps.db.tenant(account.id, (tx) =>
      ingestCrmEvents(tx, account.id, parsed.data, { origin: "webhook", adIndexes: deps.adIndexes }),
    );
    return { data: { received: parsed.data.length, ...result } };
  });
}
