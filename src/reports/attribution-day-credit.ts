import type { ModelRequest, SaleJourney } from "../attribution/models/credit.ts";
import type { Sql } from "../db/client.ts";
import { type DayCreditKey, freshDayCredits } from "../queries/attribution-day-credits.ts";
import { type CreditLevel, type SaleJourneyRow, saleJourneys } from "../queries/attribution-journeys.ts";
import { saveDayCredits } from "../queries/save-day-credits.ts";
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
export function modelKey(request: ModelRequest): string {
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
export async function windowDays<T>(
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
    const read = await saleJourneys(db, accountId, {
      window: span,
      level: params.level,
      lookbackDays: params.lookbackDays,
      unconverted: false,
    });
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
