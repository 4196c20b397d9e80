import {
  type ModelCredit,
  type ModelRequest,
  markovCredit,
  roundedCredit,
} from "../attribution/models/credit.ts";
import type { Sql } from "../db/client.ts";
import {
  type CreditLevel,
  type UnconvertedPathRow,
  unconvertedPaths,
} from "../queries/attribution-journeys.ts";
import { creditIdentities } from "../queries/credit-identities.ts";
import { freshNullPaths } from "../queries/fresh-null-paths.ts";
import { saveNullPaths } from "../queries/save-null-paths.ts";
import { modelDays } from "./attribution-day-credit.ts";
import type { ReportWindow } from "./window.ts";

export interface ModelReportParams extends ModelRequest {
  window: ReportWindow;
  level: CreditLevel;
  lookbackDays: number;
}

export interface ModelRow {
  key: string;
  platform: string | null;
  ad_id: string | null;
  ad_name: string | null;
  campaign_id: string | null;
  campaign_name: string | null;
  channel: string | null;
  credited_sales: number;
  credited_revenue: number;
  credited_net_revenue: number;
  spend: number | null;
  roi_gross: number | null;
  roi_net: number | null;
  share: number;
  paths_used: number | null;
  ci95: [number, number] | null;
}

/** The `(none)` row's key: sales without a touch at the level in the look-back. */
export const NO_TOUCH = "(none)";

const roi = (value: number, spend: number | null) => (spend ? (value - spend) / spend : null);

/**
 * GET /attribution/models (docs/attribution.md, "Models"): every counted sale of the window credited
 * under one model at one level, with the spend of the window's days and ROI at the ad and campaign
 * levels. Sorted by credited revenue, then sales, descending, then key; `(none)` last.
 */
export async function attributionModels(
  db: Sql,
  accountId: string,
  params: ModelReportParams,
): Promise<ModelRow[]> {
  const credit = await modelCredit(db, accountId, params);
  const credited = new Map(credit.rows.map((r) => [r.key ?? NO_TOUCH, r]));
  const identities = new Map<string, Awaited<ReturnType<typeof creditIdentities>>[number]>();
  if (params.level !== "channel") {
    const keys = credit.rows.flatMap((r) => (r.key === null ? [] : [r.key]));
    const found = await creditIdentities(db, accountId, { window: params.window, level: params.level, keys });
    for (const identity of found) identities.set(identity.key, identity);
  }
  const dataDriven = params.model === "markov" || params.model === "shapley";
  const rows: ModelRow[] = [...new Set([...credited.keys(), ...identities.keys()])].map((key) => {
    const c = credited.get(key);
    const identity = identities.get(key);
    const [platform, id] = key === NO_TOUCH ? [null, null] : splitKey(key);
    const spend = params.level === "channel" || key === NO_TOUCH ? null : (identity?.spend ?? 0);
    const sold = c?.sales ?? 0;
    const revenue = c?.revenue ?? 0;
    const net = c?.net ?? 0;
    return {
      key,
      platform: params.level === "channel" ? null : (identity?.platform ?? platform),
      ad_id: params.level === "ad" ? (identity?.ad_id ?? id) : null,
      ad_name: identity?.ad_name ?? null,
      campaign_id:
        params.level === "channel"
          ? null
          : (identity?.campaign_id ?? (params.level === "campaign" ? id || null : null)),
      campaign_name: identity?.campaign_name ?? null,
      channel: params.level === "channel" && key !== NO_TOUCH ? key : null,
      credited_sales: sold,
      credited_revenue: revenue,
      credited_net_revenue: net,
      spend,
      roi_gross: roi(revenue, spend),
      roi_net: roi(net, spend),
      share: credit.counted > 0 ? Number((sold / credit.counted).toFixed(6)) : 0,
      paths_used: dataDriven ? credit.pathsUsed : null,
      ci95: null,
    };
  });
  return rows.sort(
    (a, b) =>
      Number(a.key === NO_TOUCH) - Number(b.key === NO_TOUCH) ||
      b.credited_revenue - a.credited_revenue ||
      b.credited_sales - a.credited_sales ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/**
 * The per-sale models credit each day apart; the Markov chain is fitted on the window's converting
 * paths (stored by day) and its paths to null (stored by window) at once.
 */
async function modelCredit(db: Sql, accountId: string, params: ModelReportParams): Promise<ModelCredit> {
  const stored = await modelDays(db, accountId, params);
  if (!stored.markov) return roundedCredit(params.model, stored.days);
  const unconverted = await windowNullPaths(db, accountId, params);
  const nulls = unconverted.map((p) => ({ keys: p.keys, conversions: 0, nulls: p.contacts }));
  return roundedCredit("markov", [markovCredit(params.order, stored.days, nulls)]);
}

/**
 * The window's Markov paths to null: stored while they hold (freshNullPaths), else read, and
 * stored. Whatever the order asked, the paths are the same.
 */
async function windowNullPaths(
  db: Sql,
  accountId: string,
  params: ModelReportParams,
): Promise<UnconvertedPathRow[]> {
  const key = {
    level: params.level,
    lookbackDays: params.lookbackDays,
    start: params.window.start,
    end: params.window.end,
  };
  const stored = await freshNullPaths(db, accountId, key);
  if (stored) return stored;
  const read = await unconvertedPaths(db, accountId, params);
  await saveNullPaths(db, accountId, { ...key, ...read });
  return read.paths;
}

/** `platform/id` → [platform, id] (an id may hold a slash). */
function splitKey(key: string): [string, string] {
  const at = key.indexOf("/");
  return [key.slice(0, at), key.slice(at + 1)];
}
