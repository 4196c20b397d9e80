/**
 * The dates and instants the service accepts from a client. PostgreSQL has no year 0 and reads
 * `0000-…` as an error, JavaScript's `Date.UTC` maps years 0–99 to 1900–1999, and a five-digit year
 * is written `+010000-…`, which PostgreSQL does not read either: outside these bounds a value would
 * reach the database as a 502 instead of a 400. No account's data lies outside them.
 */

/** The first calendar day a `from`, `to` or dated field may name. */
export const FIRST_DAY = "1900-01-01";
/**
 * The last calendar day a `to` may name: a report's window ends where the day after `to` begins,
 * which must still be a four-digit year in every timezone.
 */
export const LAST_DAY = "9999-12-30";

const FIRST_INSTANT_MS = Date.parse(`${FIRST_DAY}T00:00:00Z`);
const LAST_INSTANT_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** The message of a value out of bounds, naming them. */
export const DAY_RANGE_MESSAGE = `must be between ${FIRST_DAY} and ${LAST_DAY}`;
export const INSTANT_RANGE_MESSAGE = `must be between ${FIRST_DAY}T00:00:00Z and 9999-12-31T23:59:59Z`;

/** A `YYYY-MM-DD` already known to be a calendar day: within the accepted days? (string order is date order) */
export function dayInRange(day: string): boolean {
  return day >= FIRST_DAY && day <= LAST_DAY;
}

/** An ISO 8601 instant (any offset) whose UTC value lies within the accepted years. */
export function instantInRange(value: string): boolean {
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && ms >= FIRST_INSTANT_MS && ms <= LAST_INSTANT_MS;
}
