import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

/**
 * Folds the account's pending deltas into the rollups — events into report_rollup_daily,
 * touchpoints into touchpoint_rollup_daily and web_session_daily (migrations 0006, 0008) — so that
 * a report reading them next, in the same transaction, sees every row written before it.
 */
export async function foldReportRollup(db: Sql, accountId: string): Promise<void> {
  await db.execute(sql`select ascribe_fold_report_rollup(${accountId}::uuid)`);
}
