import type { FastifyInstance } from "fastify";
import type { CollectAccounts } from "../ingest/collect-accounts.ts";

export const TLS_ASK_PATH = "/api/tls/ask";

/** A host name as a registration stores it (`ascribe domains add`): lowercase labels, no port. */
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * `GET {site_url}/api/tls/ask?domain=<host>`: the question an on-demand-TLS reverse proxy (Caddy's
 * `on_demand_tls { ask … }`) puts before it requests a certificate for a host it has never served.
 * 200 only for a registered first-party tracking host; 404 for anything else, so the proxy never asks
 * a certificate authority for names nobody registered (its rate limits, and certificates for
 * arbitrary names pointed at us). Answers nothing else: no account, no detail.
 */
export function registerTlsAskRoute(app: FastifyInstance, deps: { accounts: CollectAccounts }): void {
  app.get(TLS_ASK_PATH, async (request, reply) => {
    const answer = await tlsAskAnswer(deps.accounts, (request.query as Record<string, unknown>).domain);
    return reply.status(answer.registered ? 200 : 404).send(answer);
  });
}

/**
 * The endpoint's verdict on a `domain` as a proxy sends it; Settings → tracking shows it for each
 * host, so that what the page says is what the proxy will be told.
 */
export async function tlsAskAnswer(
  accounts: Pick<CollectAccounts, "byHost">,
  domain: unknown,
): Promise<{ domain: string; registered: boolean }> {
  const host = typeof domain === "string" ? domain.trim().toLowerCase().replace(/\.$/, "") : "";
  const registered = HOST.test(host) && (await accounts.byHost(host)) !== null;
  return { domain: host, registered };
}
