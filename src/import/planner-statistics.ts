import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";

/*
 * An import into a new account (or a new database) writes into tables the planner has no
 * statistics for yet, and PostgreSQL's autovacuum analyzes them a minute later at the soonest. The
 * plans made meanwhile are kept: a foreign key's check (each event's and touchpoint's contact) is
 * planned once per connection and, planned on an empty `contacts`, took an index on `account_id`
 * alone, then walked every contact of the account for each row written — an import of 41,575
 * events ran at 257 events/s instead of thousands. Taking statistics as the import grows (and the
 * invalidation that comes with them) replans those statements on the real sizes.
 */

/** The tables an events import grows and the triggers' statements read. */
const TABLES = sql`contacts, events, touchpoints, contact_activity, contact_milestones`;

/** Records written before the first refresh; each later one waits for this many times more. */
const FIRST = 1_000;
const GROWTH = 8;

/**
 * Refreshes the statistics of the tables an import grows when what it wrote passes 1,000, 8,000,
 * 64,000… records (a handful of passes, each a sample: ANALYZE reads at most 30,000 rows of a
 * table). PostgreSQL: ANALYZE as the owner (a login that does not own the tables gets a warning and
 * the autovacuum's pace). The embedded database: its own maintenance pass, which takes statistics
 * by the autovacuum rule (embedded-maintenance.ts).
 */
export function plannerStatistics(db: Database): { written(records: number): Promise<void> } {
  let total = 0;
  let next = FIRST;
  return {
    async written(records) {
      total += records;
      if (total < next) return;
      while (next <= total) next *= GROWTH;
      if (db.kind === "embedded") await db.maintain();
      else await db.probe((tx) => tx.execute(sql`analyze ${TABLES}`));
    },
  };
}
