import { z } from "zod";
import { connectorSecretContext } from "../admin/connectors.ts";
import { type SecretBox, SecretBoxError } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { foldBacklog } from "../import/fold-backlog.ts";
import { reResolveAds } from "../ingest/re-resolve-ads.ts";
import type { SpendRow } from "../ingest/spend-row.ts";
import { deleteSyncedSpend } from "../queries/delete-synced-spend.ts";
import { recordConnectorSync } from "../queries/record-connector-sync.ts";
import { spendConnector } from "../queries/spend-connector.ts";
import { upsertSpend } from "../queries/upsert-spend.ts";
import { fetchGoogleSpend } from "./google-ads-spend.ts";
import { fetchMetaSpend } from "./meta-insights.ts";
import { parseSpendCredentials, type SpendCredentials } from "./spend-credentials.ts";
import { DEFAULT_SPEND_HTTP, type SpendHttp, SpendSyncError } from "./spend-http.ts";

/** Where the vendors' APIs are (config.ts: META_API_URL, GOOGLE_ADS_API_URL, GOOGLE_OAUTH_TOKEN_URL). */
export interface SpendApis {
  metaApiUrl: string;
  googleAdsApiUrl: string;
  googleTokenUrl: string;
}

export interface SpendSyncDeps {
  db: Database;
  secrets: SecretBox;
  apis: SpendApis;
  http?: SpendHttp;
  clock?: () => Date;
}

/** Without --since: the last 28 days and today (late conversions and Meta's restatements settle within it). */
export const DEFAULT_SYNC_DAYS = 28;
/** Rows per upsert statement (each a JSON batch); all of them in the one transaction. */
const WRITE_CHUNK = 5_000;

export const spendSyncInput = z.object({
  account: z.uuid(),
  platform: z.enum(["meta", "google"]),
  since: z.iso.date({ error: "must be a date (YYYY-MM-DD)" }).optional(),
  /** One connector of the platform; absent: each of the account's connectors of the platform. */
  connector: z.uuid().optional(),
});

export interface ConnectorSync {
  connector: string;
  from: string;
  to: string;
  rows_written: number;
  rows_deleted: number;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The days to sync: since (or 28 days back) up to today, UTC. */
export function syncRange(now: Date, since: string | undefined): { from: string; to: string } {
  const to = day(now);
  const from = since ?? day(new Date(now.getTime() - DEFAULT_SYNC_DAYS * 86_400_000));
  if (from > to) throw ApiError.validation(`since: ${from} is after today (${to})`);
  // Meta keeps insights for 37 months; a wider range would be refused by the vendor anyway.
  if (from < day(new Date(now.getTime() - 37 * 31 * 86_400_000)))
    throw ApiError.validation("since: at most 37 months back (Meta keeps insights that long)");
  return { from, to };
}

async function fetchRows(deps: SpendSyncDeps, c: SpendCredentials, range: { from: string; to: string }) {
  const http = deps.http ?? DEFAULT_SPEND_HTTP;
  return c.platform === "meta"
    ? fetchMetaSpend(http, deps.apis.metaApiUrl, c, range)
    : fetchGoogleSpend(
        http,
        { apiUrl: deps.apis.googleAdsApiUrl, tokenUrl: deps.apis.googleTokenUrl },
        c,
        range,
      );
}

function openCredentials(
  secrets: SecretBox,
  account: string,
  id: string,
  sealed: string | null,
): SpendCredentials {
  if (sealed === null) throw new SpendSyncError("the connector has no credentials: add it again", "config");
  try {
    return parseSpendCredentials(secrets.open(sealed, connectorSecretContext(account, id)));
  } catch (err) {
    if (err instanceof SecretBoxError)
      throw new SpendSyncError(
        "the credentials do not open with this instance's ASCRIBE_SECRET_KEYS",
        "config",
      );
    throw err;
  }
}

/**
 * Replaces the days of one connector with what the vendor answered, in one transaction: the old rows
 * of those days go, the new ones come, last_sync_at moves. A failure before (expired token, rate
 * limit past our waits) leaves the stored days as they were.
 */
async function writeDays(
  deps: SpendSyncDeps,
  account: string,
  target: { id: string; platform: "meta" | "google"; from: string; to: string },
  fetched: SpendRow[],
): Promise<{ deleted: number; adsChanged: number }> {
  const now = (deps.clock ?? (() => new Date()))();
  return deps.db.tenant(account, async (tx) => {
    const deleted = await deleteSyncedSpend(tx, account, {
      platform: target.platform,
      connectorId: target.id,
      from: target.from,
      to: target.to,
    });
    let adsChanged = 0;
    for (let i = 0; i < fetched.length; i += WRITE_CHUNK) {
      const r = await upsertSpend(tx, account, {
        rows: fetched.slice(i, i + WRITE_CHUNK),
        connectorId: target.id,
      });
      adsChanged += r.adsChanged;
    }
    await recordConnectorSync(tx, account, { connectorId: target.id, at: now, error: null });
    return { deleted, adsChanged };
  });
}

/** Syncs one connector; its error (recorded on the connector) is thrown as a clear 4xx/5xx message. */
async function syncOne(
  deps: SpendSyncDeps,
  account: string,
  c: { id: string; sealed: string | null },
  platform: "meta" | "google",
  range: { from: string; to: string },
): Promise<ConnectorSync> {
  try {
    const credentials = openCredentials(deps.secrets, account, c.id, c.sealed);
    const fetched = await fetchRows(deps, credentials, range);
    const written = await writeDays(deps, account, { id: c.id, platform, ...range }, fetched);
    // Events and touchpoints stored earlier may name the new ads; reports fold their rollup deltas.
    if (written.adsChanged > 0) await deps.db.tenant(account, (tx) => reResolveAds(tx, account));
    await foldBacklog(deps.db, account);
    return { connector: c.id, ...range, rows_written: fetched.length, rows_deleted: written.deleted };
  } catch (err) {
    if (!(err instanceof SpendSyncError)) throw err;
    const at = (deps.clock ?? (() => new Date()))();
    await deps.db.tenant(account, (tx) =>
      recordConnectorSync(tx, account, { connectorId: c.id, at, error: err.message }),
    );
    throw new ApiError(
      err.reason === "limit" ? "rate_limited" : "validation",
      {},
      `connector ${c.id} (${platform}): ${err.message}`,
    );
  }
}

/** `ascribe spend sync`: every connector of the platform (or the one named), one after the other. */
export async function syncSpend(deps: SpendSyncDeps, input: z.input<typeof spendSyncInput>) {
  const { account, platform, since, connector } = spendSyncInput.parse(input);
  const range = syncRange((deps.clock ?? (() => new Date()))(), since);
  const found = await deps.db.tenant(account, (tx) =>
    spendConnector(tx, account, { kind: platform, id: connector ?? null }),
  );
  if (found.length === 0)
    throw new ApiError(
      "not_found",
      {},
      `account ${account} has no ${platform} connector: add one with ascribe connectors add --kind ${platform}`,
    );
  const synced: ConnectorSync[] = [];
  for (const c of found) synced.push(await syncOne(deps, account, c, platform, range));
  return { platform, rows_written: synced.reduce((n, s) => n + s.rows_written, 0), connectors: synced };
}
