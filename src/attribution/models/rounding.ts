/**
 * Largest-remainder rounding (Hamilton's method): each value rounded down to `decimals` places, then the units
 * still missing from `total` go one each to the values with the largest remainders (ties: the earlier
 * value). The rounded values sum to `total` exactly, and none moves by a unit or more.
 */
export function roundToTotal(values: readonly number[], total: number, decimals: number): number[] {
  const unit = 10 ** -decimals;
  const scaled = values.map((v) => v / unit);
  const floors = scaled.map((v) => Math.floor(v + 1e-9));
  const target = Math.round(total / unit);
  let missing = target - floors.reduce((a, b) => a + b, 0);
  const order = scaled
    .map((v, i) => ({ i, rest: v - (floors[i] as number) }))
    .sort((a, b) => (missing >= 0 ? b.rest - a.rest : a.rest - b.rest) || a.i - b.i);
  for (let k = 0; missing !== 0 && order.length > 0; k = (k + 1) % order.length) {
    const i = (order[k] as { i: number }).i;
    floors[i] = (floors[i] as number) + Math.sign(missing);
    missing -= Math.sign(missing);
  }
  return floors.map((n) => Number((n * unit).toFixed(decimals)));
}
