/*
 * Stripe amounts are integers in the currency's smallest unit (https://docs.stripe.com/currencies,
 * "Minor units in API amounts"): cents for most currencies, the unit itself for the zero-decimal
 * ones, thousandths for the three-decimal ones.
 */

/** https://docs.stripe.com/currencies#zero-decimal */
const ZERO_DECIMAL: ReadonlySet<string> = new Set([
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
]);

/**
 * https://docs.stripe.com/currencies#three-decimal. ISK, HUF and TWD are Stripe's documented
 * special cases: written in the API as two-decimal amounts, so they divide by 100 like the rest.
 */
const THREE_DECIMAL: ReadonlySet<string> = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);

/** Stripe's lowercase currency code as ISO 4217 (`jpy` → `JPY`), or null when it is not one. */
export function stripeCurrency(code: unknown): string | null {
  return typeof code === "string" && /^[a-z]{3}$/i.test(code) ? code.toUpperCase() : null;
}

/** An amount in minor units as the currency's major unit: 1999 USD → 19.99, 5000 JPY → 5000. */
export function fromMinorUnits(amount: number, currency: string): number {
  if (ZERO_DECIMAL.has(currency)) return amount;
  const divisor = THREE_DECIMAL.has(currency) ? 1000 : 100;
  // Rounded to the currency's own precision: 1999 / 100 is 19.990000000000002 in binary.
  return Math.round(amount) / divisor;
}
