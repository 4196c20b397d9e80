import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Folds the account's pending deltas into the rollups — events into report_rollup_daily,
 * touchpoints into touchpoint_rollup_daily and web_session_daily (migrations 0006, 0008) — so that
 * a report reading them next, in the same transaction, sees every row written before it. The
 * database function folds at most `chunk` rows of each log per call, so this calls it until none is
 * left. Each call must stay under the statement timeout (15 s by default) on a busy machine: a demo
 * seeded at scale 100 left 3.5 million deltas, and 100,000-row calls took 13–15 s there at load 10,
 * so the seed's last fold was cancelled; 25,000 keeps a call near 3 s.
 */
export async function foldReportRollup(
  db: Sql,
  accountId: string,
  params: { chunk?: number } = {},
): Promise<void> {
  const chunk = params.chunk ?? 25_000;
  // Nothing pending, the usual case for a report: three index probes instead of the function's
  // three statements, which it plans anew on every call (EXECUTE). A fold running concurrently has
  // not committed its deletes, so its deltas still show here and the function waits for it.
  const [pending] = await rows<{ found: boolean }>(
    db,
    sql`select exists (select 1 from report_rollup_delta where account_id = ${accountId})
                or exists (select 1 from touchpoint_rollup_delta where account_id = ${accountId})
                or exists (select 1 from web_session_delta where account_id = ${accountId}) as found`,
  );
  if (!pending?.found) return;
  while (await foldReportRollupChunk(db, accountId, { chunk }));
}

/** One call of the database function: at most `chunk` rows of each log; true while some are left. */
export async function foldReportRollupChunk(
  db: Sql,
  accountId: string,
  params: { chunk: number },
): Promise<boolean> {
  const [row] = await rows<{ more: boolean }>(
    db,
    sql`select ascribe_fold_report_rollup(${accountId}::uuid, ${params.chunk}::int) as more`,
  );
  return row?.more === true;
}
