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

/**
 * The chain's transitions, state by state (compressed rows): those of state `s` are at
 * `from[s]`…`from[s + 1]`, each to a state index (−1 = conversion, −2 = null) with its probability.
 * Typed arrays: the sweeps below run once per key, over every transition, until they settle.
 */
interface Chain {
  from: Int32Array;
  to: Int32Array;
  p: Float64Array;
  start: { to: number; p: number }[];
  /** Per state, its keys. */
  keys: Set<string>[];
}

function collapse(keys: readonly string[]): readonly string[] {
  // Most paths repeat no key at once: they are used as they are, not copied.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] === keys[i]) return keys.filter((key, j) => j === 0 || keys[j - 1] !== key);
  }
  return keys;
}

function buildChain(paths: readonly MarkovPath[], order: number): Chain {
  const index = new Map<string, number>();
  const counts: Map<number, number>[] = [];
  const startCounts = new Map<number, number>();
  const stateKeys: Set<string>[] = [];
  // The state of `keys` at `i`: its last `order` keys; at order 1 the key itself names it.
  const stateAt = (keys: readonly string[], i: number) => {
    const window = order === 1 ? null : keys.slice(Math.max(0, i - order + 1), i + 1);
    const name = window === null ? (keys[i] as string) : window.join(SEPARATOR);
    let id = index.get(name);
    if (id === undefined) {
      id = counts.length;
      index.set(name, id);
      counts.push(new Map());
      stateKeys.push(new Set(window ?? [name]));
    }
    return id;
  };
  const add = (from: Map<number, number>, to: number, n: number) => from.set(to, (from.get(to) ?? 0) + n);
  for (const path of paths) {
    const keys = collapse(path.keys);
    const walks = path.conversions + path.nulls;
    if (keys.length === 0 || walks === 0) continue;
    let previous = -1;
    for (let i = 0; i < keys.length; i++) {
      const state = stateAt(keys, i);
      add(previous === -1 ? startCounts : (counts[previous] as Map<number, number>), state, walks);
      previous = state;
    }
    const last = counts[previous] as Map<number, number>;
    if (path.conversions > 0) add(last, -1, path.conversions);
    if (path.nulls > 0) add(last, -2, path.nulls);
  }
  const normalise = (m: Map<number, number>) => {
    let total = 0;
    for (const n of m.values()) total += n;
    return [...m].map(([to, n]) => ({ to, p: n / total }));
  };
  const rows = counts.map(normalise);
  const from = new Int32Array(rows.length + 1);
  rows.forEach((out, s) => {
    from[s + 1] = (from[s] as number) + out.length;
  });
  const to = new Int32Array(from[rows.length] as number);
  const p = new Float64Array(to.length);
  rows.forEach((out, s) => {
    out.forEach((t, k) => {
      to[(from[s] as number) + k] = t.to;
      p[(from[s] as number) + k] = t.p;
    });
  });
  return { from, to, p, start: normalise(startCounts), keys: stateKeys };
}

/** P(conversion) from the start, with the states marked in `removed` leading to null. */
function conversionProbability(chain: Chain, removed: Uint8Array): number {
  const { from, to, p } = chain;
  const states = removed.length;
  const x = new Float64Array(states);
  const value = (t: number) => (t === -1 ? 1 : t === -2 || removed[t] === 1 ? 0 : (x[t] as number));
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    let moved = 0;
    for (let s = 0; s < states; s++) {
      if (removed[s] === 1) continue;
      let v = 0;
      const end = from[s + 1] as number;
      for (let k = from[s] as number; k < end; k++) v += (p[k] as number) * value(to[k] as number);
      moved = Math.max(moved, Math.abs(v - (x[s] as number)));
      x[s] = v;
    }
    if (moved <= MARKOV_TOLERANCE) break;
  }
  let probability = 0;
  for (const { to: t, p: q } of chain.start) probability += q * value(t);
  return probability;
}

export function markovAttribution(paths: readonly MarkovPath[], order: number): MarkovResult {
  const chain = buildChain(paths, order);
  const states = chain.keys.length;
  const base = conversionProbability(chain, new Uint8Array(states));
  const removalEffects = new Map<string, number>();
  const allKeys = new Set(chain.keys.flatMap((k) => [...k]));
  for (const key of [...allKeys].sort()) {
    const without = conversionProbability(
      chain,
      Uint8Array.from(chain.keys, (k) => (k.has(key) ? 1 : 0)),
    );
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
