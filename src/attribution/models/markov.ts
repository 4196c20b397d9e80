/**
 * Markov-chain attribution by removal effect (docs/attribution.md, "Markov"). Each path walks
 * start → its states → conversion or null; a state is the last `order` keys seen (fewer at a path's
 * start). A key's removal effect is the share of the conversion probability lost when every state
 * holding that key leads to null instead; credit is the removal effects normalised to sum to 1.
 */

export interface MarkovPath {
  /** Keys in time order; a key repeated at once counts once (a self-loop changes no removal effect). */
  keys: readonly string[];
  conversions: number;
  nulls: number;
}

export interface MarkovResult {
  /** P(conversion) from the start state with every key present. */
  conversionProbability: number;
  removalEffects: Map<string, number>;
  /** Removal effects normalised to sum to 1 (empty when nothing converted). */
  shares: Map<string, number>;
  /** Paths with at least one key. */
  pathsUsed: number;
}

/** Gauss–Seidel stops when no state's probability moved more than this in a sweep. */
export const MARKOV_TOLERANCE = 1e-12;
const MAX_SWEEPS = 100_000;

const SEPARATOR = "\u001f";

interface Chain {
  /** Per transient state: outgoing transitions to state indexes (−1 = conversion, −2 = null) with probabilities. */
  next: { to: number; p: number }[][];
  start: { to: number; p: number }[];
  /** Per state, its keys. */
  keys: Set<string>[];
}

function collapse(keys: readonly string[]): string[] {
  return keys.filter((key, i) => i === 0 || keys[i - 1] !== key);
}

function buildChain(paths: readonly MarkovPath[], order: number): Chain {
  const index = new Map<string, number>();
  const counts: Map<number, number>[] = [];
  const startCounts = new Map<number, number>();
  const stateKeys: Set<string>[] = [];
  const stateOf = (window: readonly string[]) => {
    const name = window.join(SEPARATOR);
    let id = index.get(name);
    if (id === undefined) {
      id = counts.length;
      index.set(name, id);
      counts.push(new Map());
      stateKeys.push(new Set(window));
    }
    return id;
  };
  const add = (from: Map<number, number>, to: number, n: number) => from.set(to, (from.get(to) ?? 0) + n);
  for (const path of paths) {
    const keys = collapse(path.keys);
    const walks = path.conversions + path.nulls;
    if (keys.length === 0 || walks === 0) continue;
    let previous = -1;
    keys.forEach((_, i) => {
      const state = stateOf(keys.slice(Math.max(0, i - order + 1), i + 1));
      add(previous === -1 ? startCounts : (counts[previous] as Map<number, number>), state, walks);
      previous = state;
    });
    const last = counts[previous] as Map<number, number>;
    if (path.conversions > 0) add(last, -1, path.conversions);
    if (path.nulls > 0) add(last, -2, path.nulls);
  }
  const normalise = (m: Map<number, number>) => {
    let total = 0;
    for (const n of m.values()) total += n;
    return [...m].map(([to, n]) => ({ to, p: n / total }));
  };
  return { next: counts.map(normalise), start: normalise(startCounts), keys: stateKeys };
}

/** P(conversion) from the start, with the states in `removed` leading to null. */
function conversionProbability(chain: Chain, removed: (state: number) => boolean): number {
  const x = new Float64Array(chain.next.length);
  const value = (to: number) => (to === -1 ? 1 : to === -2 || removed(to) ? 0 : (x[to] as number));
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    let moved = 0;
    chain.next.forEach((out, s) => {
      if (removed(s)) return;
      let v = 0;
      for (const { to, p } of out) v += p * value(to);
      moved = Math.max(moved, Math.abs(v - (x[s] as number)));
      x[s] = v;
    });
    if (moved <= MARKOV_TOLERANCE) break;
  }
  let p = 0;
  for (const { to, p: q } of chain.start) p += q * value(to);
  return p;
}

export function markovAttribution(paths: readonly MarkovPath[], order: number): MarkovResult {
  const chain = buildChain(paths, order);
  const base = conversionProbability(chain, () => false);
  const removalEffects = new Map<string, number>();
  const allKeys = new Set(chain.keys.flatMap((k) => [...k]));
  for (const key of [...allKeys].sort()) {
    const without = conversionProbability(chain, (s) => (chain.keys[s] as Set<string>).has(key));
    removalEffects.set(key, base > 0 ? Math.max(0, 1 - without / base) : 0);
  }
  let total = 0;
  for (const effect of removalEffects.values()) total += effect;
  const shares = new Map<string, number>();
  if (total > 0) for (const [key, effect] of removalEffects) if (effect > 0) shares.set(key, effect / total);
  return {
    conversionProbability: base,
    removalEffects,
    shares,
    pathsUsed: paths.filter((p) => p.keys.length > 0 && p.conversions + p.nulls > 0).length,
  };
}
