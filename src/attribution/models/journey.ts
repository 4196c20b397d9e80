/**
 * What every attribution model reads (docs/attribution.md, "Models"): a contact's touches at the
 * level being credited (ads, campaigns or channels), each with its instant, oldest first.
 */
export interface ModelTouch {
  /** The credited identity at the level asked for (an ad, a campaign or a channel). */
  key: string;
  /** Epoch milliseconds. */
  at: number;
  /** A visit with no source at all; only `last_non_direct` treats it apart. */
  direct: boolean;
}

/** Touches grouped by instant, oldest first: touches at the same instant share a position. */
export function byInstant(touches: readonly ModelTouch[]): ModelTouch[][] {
  const sorted = [...touches].sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const groups: ModelTouch[][] = [];
  for (const touch of sorted) {
    const last = groups[groups.length - 1];
    if (last && last[0]?.at === touch.at) last.push(touch);
    else groups.push([touch]);
  }
  return groups;
}

/** Adds `weight` to `key` in a share map. */
export function addShare(shares: Map<string, number>, key: string, weight: number): void {
  shares.set(key, (shares.get(key) ?? 0) + weight);
}
