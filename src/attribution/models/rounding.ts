/**
 * Largest-remainder rounding (Hamilton's method): each value rounded down to `unit`, then the units
 * still missing from `total` go one each to the values with the largest remainders (ties: the earlier
 * value). The rounded values sum to `total` exactly, and none moves by a unit or more.
 */
export function roundToTotal(values: readonly number[], total: number, unit: number): number[] {
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
  return floors.map((n) => Number((n * unit).toFixed(countDecimals(unit))));
}

function countDecimals(unit: number): number {
  const text = String(unit);
  const dot = text.indexOf(".");
  return dot === -1 ? (text.includes("e-") ? Number(text.split("e-")[1]) : 0) : text.length - dot - 1;
}
