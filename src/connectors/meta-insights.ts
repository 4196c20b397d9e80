import { z } from "zod";
import { type SpendRow, spendRowSchema } from "../ingest/spend-row.ts";
import type { MetaCredentials } from "./spend-credentials.ts";
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
 * Daily spend per ad from Meta's Marketing API insights edge:
 * https://developers.facebook.com/docs/marketing-api/insights (level=ad, time_increment=1: one row
 * per ad and day), paged by cursor (https://developers.facebook.com/docs/graph-api/results: follow
 * `paging.cursors.after` while `paging.next` is present). Rate limits:
 * https://developers.facebook.com/docs/marketing-api/overview/rate-limiting (error codes 4, 17, 613,
 * 80000–80014; X-Business-Use-Case-Usage and X-App-Usage headers); expired tokens: OAuthException 190
 * (https://developers.facebook.com/docs/graph-api/guides/error-handling).
 */
const FIELDS = [
  "ad_id",
  "ad_name",
  "adset_id",
  "adset_name",
  "campaign_id",
  "campaign_name",
  "spend",
  "clicks",
  "impressions",
  "reach",
  "date_start",
  "account_currency",
].join(",");
/** The rows per page asked for (Meta may answer fewer; `paging.next` says whether more follow). */
const PAGE_SIZE = 500;
const RATE_LIMIT_CODES = new Set([4, 17, 32, 613]);
/** Transient per Meta's error-handling guide: "temporary issue", "service unavailable". */
const TRANSIENT_CODES = new Set([1, 2]);

const numeric = z.string().regex(/^\d+(\.\d+)?$/);
const insightRow = z.object({
  ad_id: z.string(),
  ad_name: z.string().optional(),
  adset_id: z.string().optional(),
  adset_name: z.string().optional(),
  campaign_id: z.string().optional(),
  campaign_name: z.string().optional(),
  spend: numeric.optional(),
  clicks: numeric.optional(),
  impressions: numeric.optional(),
  reach: numeric.optional(),
  date_start: z.string(),
  account_currency: z.string().optional(),
});
const page = z.object({
  data: z.array(insightRow),
  paging: z
    .object({ cursors: z.object({ after: z.string().optional() }).optional(), next: z.string().optional() })
    .optional(),
});
const errorBody = z.object({
  error: z.object({
    message: z.string().optional(),
    type: z.string().optional(),
    code: z.number().optional(),
    error_subcode: z.number().optional(),
  }),
});

function toSpendRow(r: z.output<typeof insightRow>): SpendRow {
  const parsed = spendRowSchema.safeParse({
    platform: "meta",
    ad_id: r.ad_id,
    ad_name: r.ad_name?.trim() || `ad ${r.ad_id}`,
    adset_id: r.adset_id ?? null,
    adset_name: r.adset_name ?? null,
    campaign_id: r.campaign_id ?? null,
    campaign_name: r.campaign_name ?? null,
    date: r.date_start,
    total_spend: Number(r.spend ?? "0"),
    total_clicks: r.clicks === undefined ? null : Number(r.clicks),
    total_impressions: r.impressions === undefined ? null : Number(r.impressions),
    total_reach: r.reach === undefined ? null : Number(r.reach),
    currency: r.account_currency ?? null,
  });
  if (!parsed.success)
    throw new SpendSyncError(
      `Meta answered a row Ascribe cannot store (ad ${r.ad_id}, ${r.date_start})`,
      "vendor",
    );
  return parsed.data;
}

/**
 * The highest use in percent that the usage headers report (X-App-Usage's call_count/total_time/
 * total_cputime, X-Business-Use-Case-Usage's per-business entries), and the wait Meta estimates
 * before access is regained (minutes in estimated_time_to_regain_access), when it gives one.
 */
export function metaUsage(headers: Headers): { pct: number; regainMs: number | null } {
  let pct = 0;
  let regainMs: number | null = null;
  const read = (value: unknown) => {
    if (typeof value !== "object" || value === null) return;
    for (const [key, v] of Object.entries(value)) {
      if (
        typeof v === "number" &&
        ["call_count", "total_time", "total_cputime", "acc_id_util_pct"].includes(key)
      )
        pct = Math.max(pct, v);
      if (key === "estimated_time_to_regain_access" && typeof v === "number" && v > 0)
        regainMs = Math.max(regainMs ?? 0, v * 60_000);
    }
  };
  for (const name of ["x-app-usage", "x-ad-account-usage", "x-business-use-case-usage"]) {
    const raw = headers.get(name);
    if (raw === null) continue;
    try {
      const parsed: unknown = JSON.parse(raw);
      // The business use case header maps business ids to arrays of entries.
      if (name === "x-business-use-case-usage" && typeof parsed === "object" && parsed !== null)
        for (const entries of Object.values(parsed))
          for (const e of Array.isArray(entries) ? entries : []) read(e);
      else read(parsed);
    } catch {
      // A malformed header says nothing about the limit; the error codes still do.
    }
  }
  return { pct, regainMs };
}

type PageOutcome = { rows: SpendRow[]; after: string | null; pct: number };

async function fetchPage(http: SpendHttp, url: string, token: string): Promise<Attempt<PageOutcome>> {
  const response = await send(http, url, { headers: { authorization: `Bearer ${token}` } });
  if ("failed" in response) return { retry: null, why: `Meta did not answer (${response.failed})` };
  const body = await jsonBody(response);
  const usage = metaUsage(response.headers);
  if (response.ok) {
    const parsed = page.safeParse(body);
    if (!parsed.success)
      throw new SpendSyncError("Meta answered an insights page of an unknown shape", "vendor");
    const after = parsed.data.paging?.next ? (parsed.data.paging.cursors?.after ?? null) : null;
    return { done: { rows: parsed.data.data.map(toSpendRow), after, pct: usage.pct } };
  }
  const error = errorBody.safeParse(body).data?.error;
  const code = error?.code ?? null;
  const detail = `${error?.type ?? "HTTP"} ${code ?? response.status}: ${error?.message ?? response.statusText}`;
  if (code === 190 || response.status === 401)
    throw new SpendSyncError(
      `Meta refused the access token (${detail}); it has expired or been revoked: create a new token with ads_read and add the connector again`,
      "auth",
    );
  const limited =
    response.status === 429 ||
    (code !== null && (RATE_LIMIT_CODES.has(code) || (code >= 80000 && code <= 80014)));
  if (limited)
    return { retry: retryAfterMs(response.headers) ?? usage.regainMs, why: `Meta rate limit (${detail})` };
  if (response.status >= 500 || (code !== null && TRANSIENT_CODES.has(code)))
    return { retry: retryAfterMs(response.headers), why: `Meta is unavailable (${detail})` };
  throw new SpendSyncError(`Meta refused the insights request (${detail})`, "vendor");
}

/** Every ad's daily spend of the ad account for the days from..to (inclusive), all pages read. */
export async function fetchMetaSpend(
  http: SpendHttp,
  baseUrl: string,
  credentials: MetaCredentials,
  range: { from: string; to: string },
): Promise<SpendRow[]> {
  const all: SpendRow[] = [];
  let after: string | null = null;
  do {
    const query = new URLSearchParams({
      level: "ad",
      time_increment: "1",
      fields: FIELDS,
      time_range: JSON.stringify({ since: range.from, until: range.to }),
      limit: String(PAGE_SIZE),
    });
    if (after !== null) query.set("after", after);
    const url = `${baseUrl.replace(/\/+$/, "")}/act_${credentials.adAccountId}/insights?${query}`;
    const outcome = await withBackoff(http, "Meta insights", () =>
      fetchPage(http, url, credentials.accessToken),
    );
    all.push(...outcome.rows);
    after = outcome.after;
    // Close to a limit (Meta throttles at 100 %): slow down before the next page instead of hitting it.
    if (after !== null && outcome.pct >= 90) await http.sleep(http.baseDelayMs);
  } while (after !== null);
  return all;
}
