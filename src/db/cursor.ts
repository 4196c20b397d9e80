import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "./client.ts";

/** Each cursor of the process gets its own name: two lists read in one transaction never collide. */
let cursors = 0;

/**
 * The rows of `query`, `batch` at a time, through a server-side cursor: the database sends each batch
 * when asked, so a long list is never held whole (rows, then JSON) in the process, and every batch
 * comes from the one snapshot the cursor was opened on. `db` must be inside a transaction (a cursor
 * lives in one): PostgreSQL closes it when the transaction ends, however the caller leaves the loop.
 */
export async function* cursorRows<T>(db: Sql, query: SQL, batch: number): AsyncGenerator<T[]> {
  if (!Number.isSafeInteger(batch) || batch < 1)
    throw new RangeError("cursor batch must be a positive integer");
  cursors += 1;
  const name = `ascribe_rows_${cursors}`;
  await db.execute(sql`declare ${sql.raw(name)} no scroll cursor for ${query}`);
  for (;;) {
    const found = await rows<T>(db, sql.raw(`fetch forward ${batch} from ${name}`));
    if (found.length > 0) yield found;
    if (found.length < batch) return;
  }
}
