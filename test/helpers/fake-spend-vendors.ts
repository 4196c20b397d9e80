/**
 * A loopback server speaking the Meta Marketing API insights edge and the Google Ads REST API in the
 * shapes of their documentation, for the spend sync's tests and benchmark:
 * - Meta insights (https://developers.facebook.com/docs/marketing-api/insights): `{ data: [...],
 *   paging: { cursors: { before, after }, next } }`, numbers as strings, `next` absent on the last
 *   page (https://developers.facebook.com/docs/graph-api/results); errors `{ error: { message, type,
 *   code, error_subcode, fbtrace_id } }` (https://developers.facebook.com/docs/graph-api/guides/error-handling),
 *   190 for an expired token.
 * - Google OAuth (https://developers.google.com/identity/protocols/oauth2/web-server#offline):
 *   `{ access_token, expires_in, scope, token_type }`, `{ error: "invalid_grant", error_description }`.
 * - Google Ads searchStream (https://developers.google.com/google-ads/api/rest/common/search): a JSON
 *   array of batches `{ results: [...], fieldMask, requestId }`, camelCase fields, int64 as strings.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface VendorRow {
  ad_id: string;
  ad_name: string;
  adset_id: string;
  adset_name: string;
  campaign_id: string;
  campaign_name: string;
  date: string;
  /** Micros of the account currency (exact for both vendors' encodings). */
  spend_micros: number;
  clicks: number;
  impressions: number;
  reach: number;
}

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface FakeSpendVendors {
  url: string;
  metaApiUrl: string;
  googleAdsApiUrl: string;
  googleTokenUrl: string;
  /** Ad account id (digits) → its rows; customer id → its rows. */
  meta: Map<string, VendorRow[]>;
  google: Map<string, VendorRow[]>;
  metaToken: string;
  metaPageSize: number;
  /** Answers served, in order, before the normal ones (a 429, an expired token…). */
  metaScript: ScriptedAnswer[];
  googleScript: ScriptedAnswer[];
  /** Meta insights pages asked for so far (scripted answers not counted). */
  metaPagesServed: number;
  /** Meta answers OAuthException 190 once metaPagesServed reaches this; null: never. */
  metaExpireAtPage: number | null;
  revokedRefreshTokens: Set<string>;
  requests: { method: string; path: string; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

const between = (r: VendorRow, from: string, to: string) => r.date >= from && r.date <= to;
const units = (micros: number) => (micros / 1_000_000).toFixed(2);

function send(res: ServerResponse, a: ScriptedAnswer): void {
  res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
  res.end(JSON.stringify(a.body));
}

export const metaExpiredToken: ScriptedAnswer = {
  status: 400,
  headers: { "www-authenticate": 'OAuth "Facebook Platform" "invalid_token"' },
  body: {
    error: {
      message:
        "Error validating access token: Session has expired on Friday, 27-Nov-26 01:00:00 PST. The current time is Friday, 27-Nov-26 02:00:00 PST.",
      type: "OAuthException",
      code: 190,
      error_subcode: 463,
      fbtrace_id: "AbCdEfGhIjK",
    },
  },
};

function metaInsights(
  f: FakeSpendVendors,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  page: number,
) {
  const account = /\/act_(\d+)\/insights$/.exec(url.pathname)?.[1];
  if (
    req.headers.authorization !== `Bearer ${f.metaToken}` ||
    (f.metaExpireAtPage !== null && page >= f.metaExpireAtPage)
  )
    return send(res, metaExpiredToken);
  const range = JSON.parse(url.searchParams.get("time_range") ?? "{}") as { since: string; until: string };
  if (url.searchParams.get("level") !== "ad" || url.searchParams.get("time_increment") !== "1")
    return send(res, {
      status: 400,
      body: { error: { message: "level/time_increment", type: "OAuthException", code: 100 } },
    });
  const all = (f.meta.get(account ?? "") ?? []).filter((r) => between(r, range.since, range.until));
  const offset = Number(Buffer.from(url.searchParams.get("after") ?? "MA==", "base64").toString());
  const size = Math.min(Number(url.searchParams.get("limit") ?? 25), f.metaPageSize);
  const slice = all.slice(offset, offset + size);
  const cursor = (n: number) => Buffer.from(String(n)).toString("base64");
  const next = new URL(url);
  next.searchParams.set("after", cursor(offset + size));
  send(res, {
    status: 200,
    headers: { "x-app-usage": JSON.stringify({ call_count: 3, total_cputime: 1, total_time: 2 }) },
    body: {
      data: slice.map((r) => ({
        ad_id: r.ad_id,
        ad_name: r.ad_name,
        adset_id: r.adset_id,
        adset_name: r.adset_name,
        campaign_id: r.campaign_id,
        campaign_name: r.campaign_name,
        spend: units(r.spend_micros),
        clicks: String(r.clicks),
        impressions: String(r.impressions),
        reach: String(r.reach),
        account_currency: "EUR",
        date_start: r.date,
        date_stop: r.date,
      })),
      paging: {
        cursors: { before: cursor(offset), after: cursor(offset + slice.length) },
        ...(offset + size < all.length ? { next: next.toString() } : {}),
      },
    },
  });
}

function googleToken(f: FakeSpendVendors, body: string, res: ServerResponse) {
  const form = new URLSearchParams(body);
  if (form.get("grant_type") !== "refresh_token" || !form.get("client_id") || !form.get("client_secret"))
    return send(res, {
      status: 400,
      body: { error: "invalid_request", error_description: "Missing parameter" },
    });
  if (f.revokedRefreshTokens.has(form.get("refresh_token") ?? ""))
    return send(res, {
      status: 400,
      body: { error: "invalid_grant", error_description: "Token has been expired or revoked." },
    });
  send(res, {
    status: 200,
    body: {
      access_token: `ya29.${form.get("refresh_token")}`,
      expires_in: 3599,
      scope: "https://www.googleapis.com/auth/adwords",
      token_type: "Bearer",
    },
  });
}

function googleSearch(
  f: FakeSpendVendors,
  url: URL,
  req: IncomingMessage,
  body: string,
  res: ServerResponse,
) {
  const customer = /\/customers\/(\d+)\/googleAds:searchStream$/.exec(url.pathname)?.[1] ?? "";
  if (!req.headers.authorization?.startsWith("Bearer ya29.") || !req.headers["developer-token"])
    return send(res, {
      status: 401,
      body: [
        {
          error: {
            code: 401,
            message: "Request is missing required authentication credential.",
            status: "UNAUTHENTICATED",
          },
        },
      ],
    });
  const query = (JSON.parse(body) as { query: string }).query;
  const dates = /segments\.date BETWEEN '(\d{4}-\d{2}-\d{2})' AND '(\d{4}-\d{2}-\d{2})'/.exec(query);
  if (!dates || !/FROM ad_group_ad/.test(query))
    return send(res, {
      status: 400,
      body: [{ error: { code: 400, message: "Query error", status: "INVALID_ARGUMENT" } }],
    });
  const rows = (f.google.get(customer) ?? []).filter((r) => between(r, dates[1] ?? "", dates[2] ?? ""));
  const batches = [];
  for (let i = 0; i < Math.max(rows.length, 1); i += 10_000)
    batches.push({
      results: rows.slice(i, i + 10_000).map((r) => ({
        customer: { resourceName: `customers/${customer}`, currencyCode: "USD" },
        campaign: {
          resourceName: `customers/${customer}/campaigns/${r.campaign_id}`,
          id: r.campaign_id,
          name: r.campaign_name,
        },
        adGroup: {
          resourceName: `customers/${customer}/adGroups/${r.adset_id}`,
          id: r.adset_id,
          name: r.adset_name,
        },
        adGroupAd: {
          resourceName: `customers/${customer}/adGroupAds/${r.adset_id}~${r.ad_id}`,
          ad: {
            resourceName: `customers/${customer}/ads/${r.ad_id}`,
            id: r.ad_id,
            ...(r.ad_name ? { name: r.ad_name } : {}),
          },
        },
        metrics: {
          clicks: String(r.clicks),
          costMicros: String(r.spend_micros),
          impressions: String(r.impressions),
        },
        segments: { date: r.date },
      })),
      fieldMask:
        "segments.date,campaign.id,campaign.name,adGroup.id,adGroup.name,adGroupAd.ad.id,adGroupAd.ad.name,metrics.costMicros,metrics.clicks,metrics.impressions,customer.currencyCode",
      requestId: `req-${i}`,
    });
  send(res, { status: 200, body: batches });
}

export async function startFakeSpendVendors(): Promise<FakeSpendVendors> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", fake.url);
      fake.requests.push({ method: req.method ?? "", path: url.pathname, headers: req.headers });
      const body = Buffer.concat(chunks).toString();
      if (url.pathname.startsWith("/meta/")) {
        const scripted = fake.metaScript.shift();
        if (scripted) return send(res, scripted);
        fake.metaPagesServed += 1;
        return metaInsights(fake, url, req, res, fake.metaPagesServed);
      }
      if (url.pathname === "/google/token") return googleToken(fake, body, res);
      if (url.pathname.startsWith("/google/ads/")) {
        const scripted = fake.googleScript.shift();
        if (scripted) return send(res, scripted);
        return googleSearch(fake, url, req, body, res);
      }
      send(res, { status: 404, body: { error: "not found" } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeSpendVendors = {
    url,
    metaApiUrl: `${url}/meta/v21.0`,
    googleAdsApiUrl: `${url}/google/ads/v21`,
    googleTokenUrl: `${url}/google/token`,
    meta: new Map(),
    google: new Map(),
    metaToken: "EAAGmeta0token1234",
    metaPageSize: 500,
    metaScript: [],
    googleScript: [],
    metaPagesServed: 0,
    metaExpireAtPage: null,
    revokedRefreshTokens: new Set(),
    requests: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return fake;
}

/** `ads` ads × the days from..to, deterministic figures (ad i, day d: spend (i+1)·(d+1) units…). */
export function generatedRows(ads: number, from: string, days: number): VendorRow[] {
  const out: VendorRow[] = [];
  const start = Date.parse(`${from}T00:00:00Z`);
  for (let d = 0; d < days; d++) {
    const date = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
    for (let i = 0; i < ads; i++)
      out.push({
        ad_id: String(23850000000 + i),
        ad_name: `Ad ${i}`,
        adset_id: String(23840000000 + Math.floor(i / 10)),
        adset_name: `Set ${Math.floor(i / 10)}`,
        campaign_id: String(23830000000 + Math.floor(i / 50)),
        campaign_name: `Campaign ${Math.floor(i / 50)}`,
        date,
        spend_micros: (i + 1) * (d + 1) * 10_000,
        clicks: i + d,
        impressions: (i + 1) * 100,
        reach: (i + 1) * 80,
      });
  }
  return out;
}
