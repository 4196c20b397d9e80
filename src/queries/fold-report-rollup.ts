import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

/**
 * Folds the account's pending event deltas into report_rollup_daily (migration 0006), so that a
 * report reading the rollup next, in the same transaction, sees every event written before it.
 */
export async function foldReportRollup(db: Sql, accountId: string): Promise<void> {
  await db.execute(sql`select ascribe_fold_report_rollup(${accountId}::uuid)`);
}
