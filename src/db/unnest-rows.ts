import { type SQL, sql } from "drizzle-orm";

/** A column of a batch: its name (the row's field and the SQL column) and its SQL type. */
export type BatchColumn<Row> = readonly [keyof Row & string, string];

/**
 * A batch of rows as a FROM item, `unnest(…) as alias(columns)`: one typed array parameter per
 * column, serialised by the driver. PostgreSQL takes a typed array apart several times faster than
 * it takes records out of one JSON document: 5,000 events of 37 columns cost 37–59 ms as arrays
 * against 272 ms through jsonb_to_recordset (and 166 ms through json_to_recordset), measured on the
 * same rows. Large batches (imports, group-committed ingest) pay that on every row.
 */
export function unnestRows<Row>(
  rows: readonly Row[],
  columns: readonly BatchColumn<Row>[],
  alias: string,
): SQL {
  const arrays = columns.map(
    ([name, type]) => sql`${sql.param(rows.map((row) => row[name] ?? null))}::${sql.raw(type)}[]`,
  );
  const names = columns.map(([name]) => name).join(", ");
  return sql`unnest(${sql.join(arrays, sql`, `)}) as ${sql.raw(alias)}(${sql.raw(names)})`;
}
