import { addShare, type ModelTouch } from "./journey.ts";
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

/** Each key's fraction of the touched sales, of their revenue and of their net, before rounding. */
function rawCredit(
  request: ModelRequest,
  touched: readonly SaleJourney[],
  unconverted: readonly MarkovPath[],
): {
  sales: Map<string, number>;
  revenue: Map<string, number>;
  net: Map<string, number>;
  pathsUsed: number | null;
} {
  const sales = new Map<string, number>();
  const revenue = new Map<string, number>();
  const net = new Map<string, number>();
  if (request.model === "markov") {
    const paths = [
      ...touched.map((s) => ({ keys: inOrder(s.touches), conversions: 1, nulls: 0 })),
      ...unconverted,
    ];
    const fit = markovAttribution(paths, request.order);
    const totals = touched.reduce((t, s) => ({ revenue: t.revenue + s.revenue, net: t.net + s.net }), {
      revenue: 0,
      net: 0,
    });
    for (const [key, share] of fit.shares) {
      sales.set(key, share * touched.length);
      revenue.set(key, share * totals.revenue);
      net.set(key, share * totals.net);
    }
    return { sales, revenue, net, pathsUsed: fit.pathsUsed };
  }
  for (const sale of touched) {
    const shares =
      request.model === "shapley"
        ? shapleyShares(sale.touches.map((t) => t.key))
        : ruleShares(request.model, sale.touches, sale.at, request);
    for (const [key, share] of shares) {
      addShare(sales, key, share);
      addShare(revenue, key, share * sale.revenue);
      addShare(net, key, share * sale.net);
    }
  }
  return { sales, revenue, net, pathsUsed: request.model === "shapley" ? touched.length : null };
}

/**
 * Credits every counted sale of the window under one model. Sales without a touch go to the
 * `(none)` row. Totals are kept exactly: Σ sales = the counted sales, Σ revenue and Σ net = theirs
 * to the cent, each column rounded by largest remainder (rounding.ts).
 */
export function creditSales(
  request: ModelRequest,
  sales: readonly SaleJourney[],
  unconverted: readonly MarkovPath[] = [],
): ModelCredit {
  const touched = sales.filter((s) => s.touches.length > 0);
  const untouched = sales.filter((s) => s.touches.length === 0);
  const raw = rawCredit(request, touched, unconverted);
  const keys = [...raw.sales.keys()].sort();
  const noneRevenue = untouched.reduce((a, s) => a + cents(s.revenue), 0) / 100;
  const noneNet = untouched.reduce((a, s) => a + cents(s.net), 0) / 100;
  const values = (m: Map<string, number>, none: number) => [...keys.map((k) => m.get(k) ?? 0), none];
  const column = (m: Map<string, number>, none: number, total: number, decimals: number) =>
    roundToTotal(values(m, none), total, decimals);
  const totalRevenue = sales.reduce((a, s) => a + cents(s.revenue), 0) / 100;
  const totalNet = sales.reduce((a, s) => a + cents(s.net), 0) / 100;
  const soldCounts = column(raw.sales, untouched.length, sales.length, SALES_DECIMALS);
  const revenues = column(raw.revenue, noneRevenue, totalRevenue, MONEY_DECIMALS);
  const nets = column(raw.net, noneNet, totalNet, MONEY_DECIMALS);
  const rows: KeyCredit[] = [...keys, null].map((key, i) => ({
    key,
    sales: soldCounts[i] as number,
    revenue: revenues[i] as number,
    net: nets[i] as number,
  }));
  return {
    rows: rows.filter((r) => r.key !== null || untouched.length > 0),
    pathsUsed: raw.pathsUsed,
  };
}
