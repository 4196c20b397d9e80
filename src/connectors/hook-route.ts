import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ConnectorKind, connectorSecretContext } from "../admin/connectors.ts";
import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import { type SecretBox, SecretBoxError } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { failedAuthThrottle } from "../http/failed-auth.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import { createGroupCommit } from "../ingest/group-commit.ts";
import { connectorOfHook } from "../queries/connector-hook.ts";
import { type ConnectorOutcome, recordConnectorOutcomes } from "../queries/record-connector-outcomes.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** No account has this id: the connector's account is not known yet when it is looked up. */
const NO_ACCOUNT = "00000000-0000-0000-0000-000000000000";

export interface HookDeps {
  db: Database;
  secrets: SecretBox;
  counters: CounterStore;
  clock: () => Date;
  /** The process's ad indexes (ingest-events.ts `IngestOptions`). */
  adIndexes: AdIndexCache;
}

export type HookVerdict<T> = { ok: true; delivery: T } | { ok: false; reason: string };

/** What a vendor's hook adds to the shared steps: its signature check and what a delivery stores. */
export interface HookKind<T> {
  kind: ConnectorKind;
  /** The vendor's name in messages ("Calendly"). */
  vendor: string;
  /** The signature checked on the raw body, then the body read (an ApiError: a 400). */
  verify(request: FastifyRequest, raw: string, secret: string, now: Date): Promise<HookVerdict<T>>;
  /**
   * Stores the delivery for the account (in a transaction of its own, or a group commit's) and
   * answers after the commit; `duplicate` when it was already taken.
   */
  store(
    accountId: string,
    params: { connectorId: string; delivery: T; at: Date },
  ): Promise<{ duplicate: boolean; data: Record<string, unknown> }>;
  /** How a delivery is named in the connector's last error ("invitee.created <uri>"). */
  label(delivery: T): string;
}

/**
 * `POST {site_url}/api/hooks/<kind>/<connector id>`, the steps every vendor hook shares
 * (docs/connectors.md): the failed-auth gate, the connector's account found from its id and kind,
 * its signing secret opened, the vendor's signature checked on the raw body before anything is read
 * or written, the delivery stored, and the connector's last event or last error recorded. Answers 200 taken or acknowledged; 401 invalid_signature, nothing stored;
 * 404 not_found for an id that is no connector of this kind (counted as a failed attempt, so ids
 * cannot be probed faster than keys).
 */
export function registerConnectorHookRoute<T>(app: FastifyInstance, deps: HookDeps, hook: HookKind<T>): void {
  const refuse = async (request: FastifyRequest, reply: FastifyReply, error: ApiError) => {
    throw await failedAuthThrottle(deps.counters, request.ip).fail(reply, error);
  };

  // Outside the delivery's transaction (inside it, the connector's row stayed locked until its commit
  // and concurrent deliveries queued behind it: 10 connections, 15 deliveries/s, nearly all waiting
  // on that lock), and the outcomes that arrive together recorded by one statement.
  const outcomes = createGroupCommit<ConnectorOutcome, void>(async (accountId, items) => {
    await deps.db.tenant(accountId, (tx) => recordConnectorOutcomes(tx, accountId, { outcomes: items }));
    return items.map(() => undefined);
  });

  app.post(`/api/hooks/${hook.kind}/:connectorId`, async (request, reply) => {
    await failedAuthThrottle(deps.counters, request.ip).gate(reply);
    const { connectorId } = request.params as { connectorId: string };
    const unknown = new ApiError("not_found", {}, `no ${hook.vendor} connector has this id`);
    if (!UUID.test(connectorId)) return refuse(request, reply, unknown);
    const connector = await deps.db.read(NO_ACCOUNT, (tx) =>
      connectorOfHook(tx, { id: connectorId, kind: hook.kind }),
    );
    if (!connector) return refuse(request, reply, unknown);
    const { accountId, sealed } = connector;

    const note = (error: string | null) =>
      outcomes.submit(accountId, { connectorId, at: deps.clock(), error });

    let secret: string | null = null;
    try {
      secret = sealed ? deps.secrets.open(sealed, connectorSecretContext(accountId, connectorId)) : null;
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
    }
    if (!secret) {
      await note("signing secret unreadable (SECRET_KEYS changed?): every delivery is refused");
      return refuse(request, reply, new ApiError("invalid_signature", { reason: "no_secret" }));
    }

    const raw = typeof request.body === "string" ? request.body : "";
    let verdict: HookVerdict<T>;
    try {
      verdict = await hook.verify(request, raw, secret, deps.clock());
    } catch (err) {
      // Signed, but not the vendor's webhook (400): shown by `connectors test` like a refusal.
      if (err instanceof ApiError) await note(`${hook.vendor} delivery: ${err.message}`);
      throw err;
    }
    if (!verdict.ok) {
      await note(`signature ${verdict.reason}`);
      return refuse(request, reply, new ApiError("invalid_signature", { reason: verdict.reason }));
    }

    try {
      const stored = await hook.store(accountId, {
        connectorId,
        delivery: verdict.delivery,
        at: deps.clock(),
      });
      if (!stored.duplicate) await note(null);
      return { data: stored.data };
    } catch (err) {
      if (err instanceof ApiError) await note(`${hook.label(verdict.delivery)}: ${err.message}`);
      throw err;
    }
  });
}
