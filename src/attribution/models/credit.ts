import type { ModelTouch } from "./journey.ts";
import { type MarkovPath, markovAttribution } from "./markov.ts";
import { roundToTotal } from "./rounding.ts";
import { type RuleModel, type RuleOptions, ruleModels, ruleShares } from "./rule-based.ts";
import { shapleyShares } from "./shapley.ts";

export const modelNames = [...ruleModels, "markov", "shapley"] as const;
export type ModelName = RuleModel | "markov" | "shapley";

export interface ModelRequest extends RuleOptions {
  model: ModelName;
  /** Markov: how many of the latest keys make a state (1–3). */
  order: number;
}

/** A counted sale and its touches in the look-back (at the level credited). */
export interface SaleJourney {
  touches: readonly ModelTouch[];
  /** Epoch milliseconds. */
  at: number;
  /** The purchase's revenue and its net (revenue less refunds and disputes), in currency units. */
  revenue: number;
  net: number;
}

/** One credited key; `key` null is the `(none)` row: sales without a touch in the look-back. */
export interface KeyCredit {
  key: string | null;
  sales: number;
  revenue: number;
  net: number;
}

export interface ModelCredit {
  rows: KeyCredit[];
  /** Data-driven models: the paths the model was fitted on (null for rule-based models). */
  pathsUsed: number | null;
  /** The counted sales credited. */
  counted: number;
}

/** Fractional sales are given to 4 decimals, money to the cent. */
const SALES_DECIMALS = 4;
const MONEY_DECIMALS = 2;

const cents = (amount: number) => Math.round(amount * 100);

function inOrder(touches: readonly ModelTouch[]): string[] {
  return [...touches]
    .sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((t) => t.key);
}

/** [sales, revenue, net]: a key's unrounded credit, or counts and sums in cents. */
export type CreditSums = [number, number, number];

/**
 * Some sales' credit before rounding, as JSON: what the report stores for a day
 * (attribution_day_credits.credit) and sums over its window's days before rounding once. Only the
 * per-sale models can be split so (a Markov chain is fitted on every path of the window at once).
 */
export interface PartialCredit {
  /** Each credited key's unrounded sales, revenue and net. */
  keys: Record<string, CreditSums>;
  /** Sales without a touch: their count, revenue and net in cents. */
  untouched: CreditSums;
  /** Every sale: count, revenue and net in cents. */
  all: CreditSums;
  /** Paths the model was fitted on (Markov) or credited (every other model). */
  paths: number;
}

function addSums(into: Record<string, CreditSums>, key: string, sums: CreditSums): void {
  const held = into[key];
  if (held) {
    held[0] += sums[0];
    held[1] += sums[1];
    held[2] += sums[2];
  } else into[key] = [sums[0], sums[1], sums[2]];
}

function moneySums(sales: readonly SaleJourney[]): CreditSums {
  return sales.reduce<CreditSums>(
    (t, s) => [t[0] + 1, t[1] + cents(s.revenue), t[2] + cents(s.net)],
    [0, 0, 0],
  );
}

/**
 * Some sales' converting paths, as JSON: what the report stores for a day under `markov` (whatever
 * its order). Each distinct path once, in the order of its first sale, with its count: the chain
 * built from them walks its states in the order the sales would, so the fit is the same.
 */
export interface ConvertingPaths {
  paths: [keys: string[], sales: number][];
  /** Sales with a touch: count, revenue and net in cents. */
  touched: CreditSums;
  untouched: CreditSums;
  all: CreditSums;
}

/** The sales' converting paths (see ConvertingPaths). */
export function convertingPaths(sales: readonly SaleJourney[]): ConvertingPaths {
  const touched = sales.filter((s) => s.touches.length > 0);
  const counted = new Map<string, [string[], number]>();
  for (const sale of touched) {
    const keys = inOrder(sale.touches);
    const name = JSON.stringify(keys);
    const held = counted.get(name);
    if (held) held[1] += 1;
    else counted.set(name, [keys, 1]);
  }
  return {
    paths: [...counted.values()],
    touched: moneySums(touched),
    untouched: moneySums(sales.filter((s) => s.touches.length === 0)),
    all: moneySums(sales),
  };
}

/**
 * The Markov credit of some days' converting paths (in day order) and the window's paths to null,
 * unrounded: the removal-effect shares of the sales with a touch, of their revenue and of their net.
 */
export function markovCredit(
  order: number,
  days: readonly ConvertingPaths[],
  unconverted: readonly MarkovPath[],
): PartialCredit {
  const touched: CreditSums = [0, 0, 0];
  const untouched: CreditSums = [0, 0, 0];
  const all: CreditSums = [0, 0, 0];
  const paths: MarkovPath[] = [];
  for (const day of days) {
    for (const [keys, sales] of day.paths) paths.push({ keys, conversions: sales, nulls: 0 });
    for (const i of [0, 1, 2] as const) {
      touched[i] += day.touched[i];
      untouched[i] += day.untouched[i];
      all[i] += day.all[i];
    }
  }
  const fit = markovAttribution([...paths, ...unconverted], order);
  const keys: Record<string, CreditSums> = {};
  for (const [key, share] of fit.shares) {
    addSums(keys, key, [share * touched[0], (share * touched[1]) / 100, (share * touched[2]) / 100]);
  }
  // Each converting sale is a path of its own, each distinct path to null one.
  const nullPaths = unconverted.filter((p) => p.keys.length > 0 && p.nulls > 0).length;
  return { keys, untouched, all, paths: touched[0] + nullPaths };
}

/** The sales' credit under one model, unrounded. */
export function partialCredit(
  request: ModelRequest,
  sales: readonly SaleJourney[],
  unconverted: readonly MarkovPath[] = [],
): PartialCredit {
  if (request.model === "markov") return markovCredit(request.order, [convertingPaths(sales)], unconverted);
  const keys: Record<string, CreditSums> = {};
  for (const sale of sales) {
    if (sale.touches.length === 0) continue;
    const shares =
      request.model === "shapley"
        ? shapleyShares(sale.touches.map((t) => t.key))
        : ruleShares(request.model, sale.touches, sale.at, request);
    for (const [key, share] of shares) addSums(keys, key, [share, share * sale.revenue, share * sale.net]);
  }
  const untouched = moneySums(sales.filter((s) => s.touches.length === 0));
  const all = moneySums(sales);
  return { keys, untouched, all, paths: all[0] - untouched[0] };
}

/**
 * The credit of some parts (a window's days) together, rounded. Sales without a touch go to the
 * `(none)` row. Totals are kept exactly: Σ sales = the counted sales, Σ revenue and Σ net = theirs
 * to the cent, each column rounded by largest remainder (rounding.ts).
 */
export function roundedCredit(model: ModelName, parts: readonly PartialCredit[]): ModelCredit {
  const keyed: Record<string, CreditSums> = {};
  const untouched: CreditSums = [0, 0, 0];
  const all: CreditSums = [0, 0, 0];
  let paths = 0;
  for (const part of parts) {
    for (const [key, sums] of Object.entries(part.keys)) addSums(keyed, key, sums);
    for (const i of [0, 1, 2] as const) {
      untouched[i] += part.untouched[i];
      all[i] += part.all[i];
    }
    paths += part.paths;
  }
  const keys = Object.keys(keyed).sort();
  const column = (i: 0 | 1 | 2, none: number, total: number, decimals: number) =>
    roundToTotal([...keys.map((k) => (keyed[k] as CreditSums)[i]), none], total, decimals);
  const soldCounts = column(0, untouched[0], all[0], SALES_DECIMALS);
  const revenues = column(1, untouched[1] / 100, all[1] / 100, MONEY_DECIMALS);
  const nets = column(2, untouched[2] / 100, all[2] / 100, MONEY_DECIMALS);
  const rows: KeyCredit[] = [...keys, null].map((key, i) => ({
    key,
    sales: soldCounts[i] as number,
    revenue: revenues[i] as number,
    net: nets[i] as number,
  }));
  return {
    rows: rows.filter((r) => r.key !== null || untouched[0] > 0),
    pathsUsed: model === "markov" || model === "shapley" ? paths : null,
    counted: all[0],
  };
}

/** Credits every counted sale of a window under one model (see roundedCredit). */
export function creditSales(
  request: ModelRequest,
  sales: readonly SaleJourney[],
  unconverted: readonly MarkovPath[] = [],
): ModelCredit {
  return roundedCredit(request.model, [partialCredit(request, sales, unconverted)]);
}
