import { addShare, byInstant, type ModelTouch } from "./journey.ts";

export const ruleModels = [
  "first_touch",
  "last_touch",
  "last_non_direct",
  "linear",
  "time_decay",
  "position_based",
] as const;
export type RuleModel = (typeof ruleModels)[number];

export interface RuleOptions {
  /** time_decay: a touch this many days older than the sale weighs half as much. */
  halfLifeDays: number;
  /** position_based: the first and the last touch's shares (the middle shares the rest). */
  firstWeight: number;
  lastWeight: number;
}

const DAY_MS = 86_400_000;

/** Equal parts of `weight` for each touch of a group. */
function spread(shares: Map<string, number>, group: readonly ModelTouch[], weight: number): void {
  for (const touch of group) addShare(shares, touch.key, weight / group.length);
}

/**
 * One sale's credit under a rule-based model: each credited key's share, summing to 1 (empty when
 * the sale has no touch). Touches at the same instant share their position's credit equally.
 */
export function ruleShares(
  model: RuleModel,
  touches: readonly ModelTouch[],
  saleAt: number,
  options: RuleOptions,
): Map<string, number> {
  const shares = new Map<string, number>();
  const groups = byInstant(touches);
  if (groups.length === 0) return shares;
  const first = groups[0] as ModelTouch[];
  const last = groups[groups.length - 1] as ModelTouch[];
  switch (model) {
    case "first_touch":
      spread(shares, first, 1);
      break;
    case "last_touch":
      spread(shares, last, 1);
      break;
    case "last_non_direct": {
      // All direct: the direct visits keep the credit (there is nothing else to give it to).
      const sourced = byInstant(touches.filter((t) => !t.direct));
      spread(shares, sourced.length > 0 ? (sourced[sourced.length - 1] as ModelTouch[]) : last, 1);
      break;
    }
    case "linear":
      spread(shares, touches, 1);
      break;
    case "time_decay": {
      const weights = touches.map((t) => 2 ** -((saleAt - t.at) / (options.halfLifeDays * DAY_MS)));
      const total = weights.reduce((a, b) => a + b, 0);
      touches.forEach((t, i) => {
        addShare(shares, t.key, (weights[i] as number) / total);
      });
      break;
    }
    case "position_based":
      positionShares(shares, groups, options);
      break;
  }
  return shares;
}

/**
 * 40/20/40 by default: the first position `firstWeight`, the last `lastWeight`, the touches between
 * share the rest equally. Two positions split the credit in the ratio of their weights; one position
 * (a single touch, or every touch at one instant) takes it all.
 */
function positionShares(shares: Map<string, number>, groups: ModelTouch[][], options: RuleOptions): void {
  const first = groups[0] as ModelTouch[];
  const last = groups[groups.length - 1] as ModelTouch[];
  if (groups.length === 1) {
    spread(shares, first, 1);
    return;
  }
  const ends = options.firstWeight + options.lastWeight;
  if (groups.length === 2) {
    spread(shares, first, ends === 0 ? 0.5 : options.firstWeight / ends);
    spread(shares, last, ends === 0 ? 0.5 : options.lastWeight / ends);
    return;
  }
  spread(shares, first, options.firstWeight);
  spread(shares, last, options.lastWeight);
  spread(shares, groups.slice(1, -1).flat(), 1 - ends);
}
