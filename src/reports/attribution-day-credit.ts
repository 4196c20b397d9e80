import {
  type ConvertingPaths,
  convertingPaths,
  type ModelRequest,
  modelNames,
  type PartialCredit,
  partialCredit,
  type SaleJourney,
} from "../attribution/models/credit.ts";
import type { Sql } from "../db/client.ts";
import { accountTimezone } from "../queries/account-timezone.ts";
import { type DayCreditKey, freshDayCredits } from "../queries/attribution-day-credits.ts";
import { type CreditLevel, type SaleJourneyRow, saleJourneys } from "../queries/attribution-journeys.ts";
import { saveDayCredits } from "../queries/save-day-credits.ts";
import { storedDayKinds } from "../queries/stored-day-kinds.ts";
import { addDays, dateIn, type ReportWindow, reportWindow } from "./window.ts";

export interface DayCreditParams extends ModelRequest {
  window: ReportWindow;
  level: CreditLevel;
  lookbackDays: number;
}

/** A sale's journey as the models take it. */
function toSaleJourney(s: SaleJourneyRow): SaleJourney {
  return {
    touches: s.keys.map((key, i) => ({ key, at: s.ats[i] as number, direct: key === "direct" })),
    at: s.at,
    revenue: s.revenue,
    net: s.net,
  };
}

/**
 * What a stored day depends on besides its level and look-back: the model and its settings; for
 * `markov`, whatever its order, the day's converting paths.
 */
function modelKey(request: ModelRequest): string {
  switch (request.model) {
    case "time_decay":
      return `time_decay:${request.halfLifeDays}`;
    case "position_based":
      return `position_based:${request.firstWeight}/${request.lastWeight}`;
    case "markov":
      return "markov_paths";
    default:
      return request.model;
  }
}

/**
 * What each day of the window gives under a model (docs/attribution.md, "Speed"): the days still
 * stored as computed (freshDayCredits), the others computed by `ofDay` from their sales' journeys,
 * in one read from the first to the last of them, and stored. A live account's ingest stales only
 * today, so a report of 30 days reads 29 stored days and the journeys of one.
 */
async function windowDays<T>(
  db: Sql,
  accountId: string,
  params: DayCreditParams,
  ofDay: (sales: readonly SaleJourney[]) => T,
): Promise<T[]> {
  const w = params.window;
  const key: DayCreditKey = {
    level: params.level,
    model: modelKey(params),
    lookbackDays: params.lookbackDays,
    timezone: w.timezone,
  };
  const days: string[] = [];
  for (let day = w.from; day <= w.to; day = addDays(day, 1)) days.push(day);
  const stored = await freshDayCredits<T>(db, accountId, { ...key, from: w.from, to: w.to });
  const credit = new Map(stored.map((s) => [s.day, s.credit]));
  const missing = days.filter((day) => !credit.has(day));
  const first = missing[0];
  const last = missing[missing.length - 1];
  if (first !== undefined && last !== undefined) {
    const span = reportWindow({ from: first, to: last }, { timezone: w.timezone }, new Date());
    const read = await saleJourneys(db, accountId, { ...params, window: span });
    const salesOf = new Map<string, SaleJourney[]>();
    for (const sale of read.sales) {
      const day = dateIn(w.timezone, new Date(sale.at));
      const held = salesOf.get(day);
      if (held) held.push(toSaleJourney(sale));
      else salesOf.set(day, [toSaleJourney(sale)]);
    }
    const computed = [];
    for (let day = first; day <= last; day = addDays(day, 1)) {
      const dayCredit = ofDay(salesOf.get(day) ?? []);
      credit.set(day, dayCredit);
      computed.push({ day, credit: dayCredit });
    }
    await saveDayCredits(db, accountId, { ...key, seen: read.seen, days: computed });
  }
  return days.map((day) => credit.get(day) as T);
}

/** The window's days under a model: each day's credit, or for Markov each day's converting paths. */
export async function modelDays(
  db: Sql,
  accountId: string,
  params: DayCreditParams,
): Promise<{ markov: true; days: ConvertingPaths[] } | { markov: false; days: PartialCredit[] }> {
  if (params.model === "markov") {
    return { markov: true, days: await windowDays(db, accountId, params, convertingPaths) };
  }
  return {
    markov: false,
    days: await windowDays(db, accountId, params, (sales) => partialCredit(params, sales)),
  };
}

/** modelKey's inverse: the request a stored model key stands for (null: none). */
function requestOf(model: string): ModelRequest | null {
  const request: ModelRequest = {
    model: "linear",
    order: 1,
    halfLifeDays: 7,
    firstWeight: 0.4,
    lastWeight: 0.4,
  };
  const [name, setting = ""] = model.split(":");
  if (name === "markov_paths") return { ...request, model: "markov" };
  if (name === "time_decay") return { ...request, model: name, halfLifeDays: Number(setting) };
  if (name === "position_based") {
    const [first, last] = setting.split("/").map(Number);
    return { ...request, model: name, firstWeight: first ?? 0.4, lastWeight: last ?? 0.4 };
  }
  const known = modelNames.find((m) => m === name && m !== "markov");
  return known ? { ...request, model: known } : null;
}

/** The days refreshed after an import: the last month of what the account has asked for. */
const REFRESHED_DAYS = 31;

/**
 * After an import (run-import.ts): computes again the stored days it staled, for every model, level
 * and look-back the account has asked for, over the last REFRESHED_DAYS days of what was asked, so
 * the first report after a large import reads stored days instead of paying for them.
 */
export async function refreshStoredDays(db: Sql, accountId: string): Promise<void> {
  const timezone = await accountTimezone(db, accountId);
  if (timezone === null) return;
  for (const kind of await storedDayKinds(db, accountId)) {
    const request = requestOf(kind.model);
    if (request === null) continue;
    const params = {
      ...request,
      window: reportWindow(
        { from: addDays(kind.last_day, 1 - REFRESHED_DAYS), to: kind.last_day },
        { timezone },
        new Date(),
      ),
      level: kind.level as CreditLevel,
      lookbackDays: kind.lookback_days,
    };
    await modelDays(db, accountId, params);
  }
}
