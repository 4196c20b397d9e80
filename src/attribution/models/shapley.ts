/**
 * Shapley attribution with the characteristic function v(S) = conversions of the journeys whose set
 * of touched keys is included in S (docs/attribution.md, "Shapley"). v is a sum of unanimity games,
 * one per journey, and the Shapley value of a unanimity game on T gives 1/|T| to each member of T
 * (Shapley 1953, additivity and symmetry): so the value is computed exactly, journey by journey, for
 * any number of keys — no enumeration of the 2^n coalitions and no sampling.
 */
export function shapleyShares(keys: readonly string[]): Map<string, number> {
  const distinct = [...new Set(keys)];
  return new Map(distinct.map((key) => [key, 1 / distinct.length]));
}
