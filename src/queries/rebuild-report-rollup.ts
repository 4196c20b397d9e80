import { sql } from "drizzle-orm";
import { rows, type Sql, sessionSetting } from "../db/client.ts";

/**
 * Recomputes the account's rollups and contact milestones from its events and touchpoints, in the
 * caller's transaction (migration 0008's `ascribe_rebuild_report_rollup`): their days are the
 * account timezone's, so a new timezone needs them again. The account's row is locked first (FOR
 * UPDATE conflicts with the foreign-key checks of every row written for it), so no event or
 * touchpoint of the account commits while the rollups are read from the tables: one committed
 * between the rebuild's statements would be counted twice, once from its table and once from its
 * delta. It lasts as long as the account's data takes (seconds at scale 10): the statement timeout
 * is lifted for this transaction, and the account's writers wait for it.
 */
export async function rebuildReportRollup(db: Sql, accountId: string): Promise<void> {
  await rows(db, sql`select 1 from accounts where id = ${accountId} for update`);
  await sessionSetting(db, "statement_timeout", "0");
  await rows(db, sql`select ascribe_rebuild_report_rollup(${accountId}::uuid)`);
}
