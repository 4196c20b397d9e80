import { z } from "zod";
import { type SpendRow, spendRowSchema } from "../ingest/spend-row.ts";
import type { GoogleCredentials } from "./spend-credentials.ts";
import {
  type Attempt,
  jsonBody,
  retryAfterMs,
  type SpendHttp,
  SpendSyncError,
  send,
  withBackoff,
} from "./spend-http.ts";

/**
 * Daily spend per ad from the Google Ads API over REST:
 * - an access token from the refresh token (https://developers.google.com/identity/protocols/oauth2/web-server#offline:
 *   POST the token endpoint with grant_type=refresh_token);
 * - `POST /customers/{id}/googleAds:searchStream` with a GAQL query
 *   (https://developers.google.com/google-ads/api/rest/common/search), headers `developer-token` and,
 *   through a manager account, `login-customer-id`
 *   (https://developers.google.com/google-ads/api/rest/auth). The answer is a JSON array of batches,
 *   each with `results`; int64 fields (ids, cost_micros, clicks) arrive as strings; cost is in
 *   micros of the account's currency (https://developers.google.com/google-ads/api/docs/reporting/overview).
 */
export interface GoogleEndpoints {
  /** e.g. https://googleads.googleapis.com/v21 */
  apiUrl: string;
  /** https://oauth2.googleapis.com/token */
  tokenUrl: string;
}

const tokenAnswer = z.object({ access_token: z.string().min(1) });
const tokenError = z.object({ error: z.string(), error_description: z.string().optional() });
const int64 = z.string().regex(/^\d+$/);
const result = z.object({
  segments: z.object({ date: z.string() }),
  campaign: z.object({ id: int64, name: z.string().optional() }).optional(),
  adGroup: z.object({ id: int64, name: z.string().optional() }).optional(),
  adGroupAd: z.object({ ad: z.object({ id: int64, name: z.string().optional() }) }),
  metrics: z
    .object({ costMicros: int64.optional(), clicks: int64.optional(), impressions: int64.optional() })
    .optional(),
  customer: z.object({ currencyCode: z.string().optional() }).optional(),
});
const batches = z.array(z.object({ results: z.array(result).optional() }));
const apiError = z.object({
  error: z.object({
    code: z.number().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
  }),
});

export function spendQuery(from: string, to: string): string {
  return [
    "SELECT segments.date, campaign.id, campaign.name, ad_group.id, ad_group.name,",
    "ad_group_ad.ad.id, ad_group_ad.ad.name, metrics.cost_micros, metrics.clicks, metrics.impressions,",
    "customer.currency_code",
    "FROM ad_group_ad",
    `WHERE segments.date BETWEEN '${from}' AND '${to}'`,
  ].join(" ");
}

/** Micros to currency units, exactly for any int64 (a Number would round above 2^53 micros). */
export function microsToUnits(micros: string): number {
  const padded = micros.padStart(7, "0");
  return Number(`${padded.slice(0, -6)}.${padded.slice(-6)}`);
}

function toSpendRow(r: z.output<typeof result>): SpendRow {
  const id = r.adGroupAd.ad.id;
  const parsed = spendRowSchema.safeParse({
    platform: "google",
    ad_id: id,
    // Responsive search ads carry no name.
    ad_name: r.adGroupAd.ad.name?.trim() || `ad ${id}`,
    adset_id: r.adGroup?.id ?? null,
    adset_name: r.adGroup?.name ?? null,
    campaign_id: r.campaign?.id ?? null,
    campaign_name: r.campaign?.name ?? null,
    date: r.segments.date,
    total_spend: microsToUnits(r.metrics?.costMicros ?? "0"),
    total_clicks: Number(r.metrics?.clicks ?? "0"),
    total_impressions: Number(r.metrics?.impressions ?? "0"),
    total_reach: null,
    currency: r.customer?.currencyCode ?? null,
  });
  if (!parsed.success)
    throw new SpendSyncError(
      `Google Ads answered a row Ascribe cannot store (ad ${id}, ${r.segments.date})`,
      "vendor",
    );
  return parsed.data;
}

/** Google's RetryInfo (`"retryDelay": "12s"`) in an error's details, as milliseconds. */
function retryDelayMs(body: unknown): number | null {
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(JSON.stringify(body ?? null));
  return match ? Math.round(Number(match[1]) * 1000) : null;
}

async function accessToken(
  http: SpendHttp,
  tokenUrl: string,
  c: GoogleCredentials,
): Promise<Attempt<string>> {
  const response = await send(http, tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      client_id: c.clientId,
      client_secret: c.clientSecret,
      refresh_token: c.refreshToken,
    }).toString(),
  });
  if ("failed" in response) return { retry: null, why: `Google OAuth did not answer (${response.failed})` };
  const body = await jsonBody(response);
  if (response.ok) {
    const token = tokenAnswer.safeParse(body);
    if (!token.success) throw new SpendSyncError("Google OAuth answered without an access token", "vendor");
    return { done: token.data.access_token };
  }
  if (response.status === 429 || response.status >= 500)
    return { retry: retryAfterMs(response.headers), why: `Google OAuth answered ${response.status}` };
  const e = tokenError.safeParse(body).data;
  throw new SpendSyncError(
    `Google refused the refresh token (${e ? `${e.error}: ${e.error_description ?? ""}`.trim() : `HTTP ${response.status}`}); it has expired or been revoked, or the client id/secret is wrong: authorize again and add the connector again`,
    "auth",
  );
}

async function search(
  http: SpendHttp,
  url: string,
  headers: Record<string, string>,
  query: string,
): Promise<Attempt<SpendRow[]>> {
  const response = await send(http, url, { method: "POST", headers, body: JSON.stringify({ query }) });
  if ("failed" in response) return { retry: null, why: `Google Ads did not answer (${response.failed})` };
  const body = await jsonBody(response);
  if (response.ok) {
    const parsed = batches.safeParse(body);
    if (!parsed.success)
      throw new SpendSyncError("Google Ads answered searchStream in an unknown shape", "vendor");
    return { done: parsed.data.flatMap((b) => (b.results ?? []).map(toSpendRow)) };
  }
  // Errors come as one object, or as the stream's array with the error in its last element.
  const e = apiError.safeParse(Array.isArray(body) ? body.at(-1) : body).data?.error;
  const detail = `${e?.status ?? "HTTP"} ${e?.code ?? response.status}: ${e?.message ?? response.statusText}`;
  if (response.status === 401)
    throw new SpendSyncError(`Google Ads refused the credentials (${detail})`, "auth");
  if (response.status === 429)
    return {
      retry: retryAfterMs(response.headers) ?? retryDelayMs(body),
      why: `Google Ads rate limit (${detail})`,
    };
  if (response.status >= 500)
    return { retry: retryAfterMs(response.headers), why: `Google Ads is unavailable (${detail})` };
  throw new SpendSyncError(`Google Ads refused the spend query (${detail})`, "vendor");
}

/** Every ad's daily spend of the customer for the days from..to (inclusive). */
export async function fetchGoogleSpend(
  http: SpendHttp,
  endpoints: GoogleEndpoints,
  credentials: GoogleCredentials,
  range: { from: string; to: string },
): Promise<SpendRow[]> {
  const token = await withBackoff(http, "Google OAuth", () =>
    accessToken(http, endpoints.tokenUrl, credentials),
  );
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "developer-token": credentials.developerToken,
    "content-type": "application/json",
  };
  if (credentials.loginCustomerId !== null) headers["login-customer-id"] = credentials.loginCustomerId;
  const url = `${endpoints.apiUrl.replace(/\/+$/, "")}/customers/${credentials.customerId}/googleAds:searchStream`;
  const query = spendQuery(range.from, range.to);
  return withBackoff(http, "Google Ads searchStream", () => search(http, url, headers, query));
}
