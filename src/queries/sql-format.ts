import { type SQL, sql } from "drizzle-orm";

/** A timestamp as ISO 8601 in UTC with milliseconds, as JavaScript writes it. */
export const isoMs = (column: SQL) =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An ILIKE pattern matching `fragment` anywhere, its own `%`, `_` and `\` taken literally. */
export function containsPattern(fragment: string): string {
  return `%${fragment.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
