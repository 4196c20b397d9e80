import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import {
  spendCredentialIssues,
  spendCredentialOptions,
  spendCredentials,
} from "../connectors/spend-credentials.ts";
import { type SecretBox, SecretBoxError } from "../crypto/secret-box.ts";
import { type Database, rows } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { requireAccount } from "./accounts.ts";

/** CONTRACT.md's connector kinds; the webhook kinds have a hook URL and a signing secret. */
export const CONNECTOR_KINDS = ["stripe", "calendly", "calcom", "meta", "google"] as const;
export type ConnectorKind = (typeof CONNECTOR_KINDS)[number];
const WEBHOOK_KINDS: ReadonlySet<ConnectorKind> = new Set(["stripe", "calendly", "calcom"]);
/**
 * The kinds this build serves. A connector of another kind would be stored and then never receive
 * or fetch anything, so `add` refuses it until its hook or sync exists.
 */
const AVAILABLE_KINDS: ReadonlySet<ConnectorKind> = new Set([
  "stripe",
  "calendly",
  "calcom",
  "meta",
  "google",
]);

/** Binds a sealed secret to its account and connector: copied to another row, it won't open. */
export function connectorSecretContext(accountId: string, connectorId: string): string {
  return `connector:${accountId}:${connectorId}`;
}

export function hookUrl(siteUrl: string, kind: ConnectorKind, connectorId: string): string | null {
  return WEBHOOK_KINDS.has(kind) ? `${siteUrl.replace(/\/+$/, "")}/api/hooks/${kind}/${connectorId}` : null;
}

export const addConnectorInput = z
  .object({
    account: z.uuid(),
    kind: z.enum(CONNECTOR_KINDS),
    /** The vendor's signing secret (Stripe issues one per endpoint: `whsec_…`). */
    secret: z.string().trim().min(1).max(500).optional(),
    // Meta and Google Ads: the ad account and its credentials (src/connectors/spend-credentials.ts).
    ...spendCredentialOptions.shape,
  })
  .superRefine((o, ctx) => {
    for (const issue of spendCredentialIssues(o.kind, o))
      ctx.addIssue({ code: "custom", path: [issue.path], message: issue.message });
    if (o.kind === "stripe" && o.secret === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["secret"],
        message: "Stripe issues the signing secret: pass the endpoint's whsec_… with --secret",
      });
    if (o.kind === "stripe" && o.secret !== undefined && !/^whsec_[A-Za-z0-9+/=_-]{8,}$/.test(o.secret))
      ctx.addIssue({
        code: "custom",
        path: ["secret"],
        message: "must be a Stripe signing secret (whsec_…)",
      });
  });

/**
 * Adds a connector and answers its hook URL and signing secret (CONTRACT.md). The secret is shown
 * here, once; at rest it is sealed.
 */
export async function addConnector(
  db: Database,
  secrets: SecretBox,
  siteUrl: string,
  input: z.input<typeof addConnectorInput>,
): Promise<{ id: string; kind: ConnectorKind; webhook_url: string | null; secret: string | null }> {
  const parsed = addConnectorInput.parse(input);
  const { account, kind, secret: given } = parsed;
  if (!AVAILABLE_KINDS.has(kind))
    throw ApiError.validation(
      `kind: ${kind} connectors are not available in this version (${[...AVAILABLE_KINDS].join(", ")} are)`,
    );
  const id = randomUUID();
  const secret = WEBHOOK_KINDS.has(kind) ? (given ?? `whsec_${randomBytes(24).toString("base64url")}`) : null;
  const sealed = secret === null ? null : secrets.seal(secret, connectorSecretContext(account, id));
  const credentials = spendCredentials(kind, parsed);
  const credentialsSealed =
    credentials === null
      ? null
      : secrets.seal(JSON.stringify(credentials), connectorSecretContext(account, id));
  await db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    await tx.execute(sql`
      insert into connectors (account_id, id, kind, secret_sealed, credentials_sealed)
      values (${account}, ${id}, ${kind}, ${sealed}, ${credentialsSealed})`);
  });
  return { id, kind, webhook_url: hookUrl(siteUrl, kind, id), secret };
}

export const listConnectorsInput = z.object({ account: z.uuid() });

interface ConnectorRow {
  id: string;
  kind: ConnectorKind;
  secret_sealed: string | null;
  created_at: string;
  last_event_at: string | null;
  last_sync_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
}

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

async function connectorRows(db: Database, account: string, id: string | null): Promise<ConnectorRow[]> {
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    return rows<ConnectorRow>(
      tx,
      sql`
        -- Spend kinds have no signing secret: connectors test checks that their sealed credentials open.
        select id::text as id, kind, coalesce(secret_sealed, credentials_sealed) as secret_sealed,
               ${iso("created_at")} as created_at,
               ${iso("last_event_at")} as last_event_at, ${iso("last_sync_at")} as last_sync_at,
               last_error, ${iso("last_error_at")} as last_error_at
        from connectors
        where account_id = ${account} and (${id}::uuid is null or id = ${id}::uuid)
        order by created_at, id`,
    );
  });
}

/** The account's connectors, oldest first; never their secrets. */
export async function listConnectors(
  db: Database,
  siteUrl: string,
  input: z.input<typeof listConnectorsInput>,
) {
  const { account } = listConnectorsInput.parse(input);
  return (await connectorRows(db, account, null)).map(({ secret_sealed: _sealed, ...c }) => ({
    ...c,
    webhook_url: hookUrl(siteUrl, c.kind, c.id),
  }));
}

export const connectorInput = z.object({ account: z.uuid(), id: z.uuid() });

async function oneConnector(db: Database, account: string, id: string): Promise<ConnectorRow> {
  const found = (await connectorRows(db, account, id))[0];
  if (!found) throw new ApiError("not_found", {}, `connector ${id} is not a connector of account ${account}`);
  return found;
}

/** Removes a connector: its hook URL answers 404 from then on. */
export async function removeConnector(db: Database, input: z.input<typeof connectorInput>) {
  const { account, id } = connectorInput.parse(input);
  const removed = await db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    return rows<{ id: string }>(
      tx,
      sql`delete from connectors where account_id = ${account} and id = ${id}::uuid returning id::text as id`,
    );
  });
  if (removed.length === 0)
    throw new ApiError("not_found", {}, `connector ${id} is not a connector of account ${account}`);
  return { id, removed: true };
}

/**
 * Whether a connector's last error is its current state: an error older than the last delivery
 * taken (or sync done) is history. Settings → connections marks errors with the same rule.
 */
export function errorIsCurrent(c: {
  last_event_at: string | null;
  last_sync_at: string | null;
  last_error_at: string | null;
}): boolean {
  const lastGood = c.last_event_at ?? c.last_sync_at;
  return c.last_error_at !== null && (lastGood === null || c.last_error_at > lastGood);
}

/**
 * A connector's check from its row, without calling the vendor: its sealed secret still opens with
 * this instance's keys (a wrong SECRET_KEYS would refuse every delivery), and what it last
 * received or refused.
 */
function checkOf(secrets: SecretBox, account: string, c: ConnectorRow) {
  let secret: "ok" | "missing" | "unreadable" = "missing";
  if (c.secret_sealed !== null) {
    try {
      secrets.open(c.secret_sealed, connectorSecretContext(account, c.id));
      secret = "ok";
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      secret = "unreadable";
    }
  }
  const failing = errorIsCurrent(c);
  const ok = (secret === "ok" || !WEBHOOK_KINDS.has(c.kind)) && !failing;
  return {
    id: c.id,
    kind: c.kind,
    ok,
    secret,
    last_event_at: c.last_event_at,
    last_sync_at: c.last_sync_at,
    last_error: c.last_error,
    last_error_at: c.last_error_at,
  };
}

/** Checks a connector (`ascribe connectors test`; see checkOf). */
export async function testConnector(db: Database, secrets: SecretBox, input: z.input<typeof connectorInput>) {
  const { account, id } = connectorInput.parse(input);
  return checkOf(secrets, account, await oneConnector(db, account, id));
}

/** The account's connectors as `listConnectors` answers them, each with its check, in one read. */
export async function checkConnectors(
  db: Database,
  secrets: SecretBox,
  siteUrl: string,
  input: z.input<typeof listConnectorsInput>,
) {
  const { account } = listConnectorsInput.parse(input);
  return (await connectorRows(db, account, null)).map((row) => {
    const { secret_sealed: _sealed, ...c } = row;
    return { ...c, webhook_url: hookUrl(siteUrl, c.kind, c.id), check: checkOf(secrets, account, row) };
  });
}
