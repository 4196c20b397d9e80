import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "./client.ts";

/** Each cursor of the process gets its own name: two lists read in one transaction never collide. */
let cursors = 0;

/**
 * The rows of `query`, `batch` at a time, through a server-side cursor: the database sends each batch
 * when asked, so a long list is never held whole (rows, then JSON) in the process, and every batch
 * comes from the one snapshot the cursor was opened on. `db` must be inside a transaction (a cursor
 * lives in one): PostgreSQL closes it when the transaction ends, however the caller leaves the loop.
 *
 * The next batch is asked for before this one is handed over, so the database reads it while the
 * caller checks and serialises this one: on PostgreSQL the two run on separate cores (measured on
 * /contacts/customers at scale 100, 34,710 rows: see docs/scaling.md). At most two batches are
 * held at a time.
 */
export async function* cursorRows<T>(db: Sql, query: SQL, batch: number): AsyncGenerator<T[]> {
  if (!Number.isSafeInteger(batch) || batch < 1)
    throw new RangeError("cursor batch must be a positive integer");
  cursors += 1;
  const name = `ascribe_rows_${cursors}`;
  await db.execute(sql`declare ${sql.raw(name)} no scroll cursor for ${query}`);
  const fetchNext = () => rows<T>(db, sql.raw(`fetch forward ${batch} from ${name}`));
  let pending = fetchNext();
  try {
    for (;;) {
      const found = await pending;
      const more = found.length === batch;
      if (more) pending = fetchNext();
      if (found.length > 0) yield found;
      if (!more) return;
    }
  } finally {
    // A caller leaving early (the client hung up) leaves one fetch in flight: it is awaited, so it
    // does not overlap the transaction's end, and its failure is not left unhandled.
    await pending.catch(() => undefined);
  }
}
