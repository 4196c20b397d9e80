import type { AdNetwork, AdTarget } from "./ad-network.ts";

export interface GraphApiOptions {
  /** e.g. https://graph.facebook.com/v21.0, or a loopback fake's address. */
  baseUrl: string;
  /** The account's Marketing API token (ads_management); null: not connected. */
  tokenFor(accountId: string): Promise<string | null>;
  /** Per call. */
  timeoutMs?: number;
}

/**
 * The Meta Marketing API, for `meta` ads and campaigns: pausing an ad is `POST /{ad-id}
 * status=PAUSED`; a campaign's daily budget is read and written as `daily_budget`, in the currency's
 * minor unit (cents). Any other platform, a missing token, an HTTP error or a timeout throws, and the
 * run records it.
 */
export function createGraphApiNetwork(options: GraphApiOptions): AdNetwork {
  const call = async (
    accountId: string,
    target: AdTarget,
    init: { method: "GET" | "POST"; fields?: Record<string, string>; query?: string },
  ) => {
    if (target.platform !== "meta") throw new Error(`no ad network connector for ${target.platform}`);
    if (!/^[0-9]{1,32}$/.test(target.id)) throw new Error(`not a Meta object id: ${target.id}`);
    const token = await options.tokenFor(accountId);
    if (!token) throw new Error("no Meta access token configured");
    const url = `${options.baseUrl.replace(/\/$/, "")}/${target.id}${init.query ? `?${init.query}` : ""}`;
    const response = await fetch(url, {
      method: init.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.fields ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: init.fields ? new URLSearchParams(init.fields).toString() : undefined,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (!response.ok) {
      const error = body?.error as { message?: unknown } | undefined;
      throw new Error(
        `Meta API ${response.status}: ${typeof error?.message === "string" ? error.message : "error"}`,
      );
    }
    return body ?? {};
  };

  return {
    async pauseAd(accountId, ad) {
      await call(accountId, ad, { method: "POST", fields: { status: "PAUSED" } });
    },
    async campaignDailyBudget(accountId, campaign) {
      const body = await call(accountId, campaign, { method: "GET", query: "fields=daily_budget" });
      const cents = Number(body.daily_budget);
      if (!Number.isFinite(cents))
        throw new Error("the campaign has no daily budget (lifetime or ad set budgets)");
      return cents / 100;
    },
    async setCampaignDailyBudget(accountId, campaign, amount) {
      await call(accountId, campaign, {
        method: "POST",
        fields: { daily_budget: String(Math.round(amount * 100)) },
      });
    },
  };
}
