import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { isoMs } from "./sql-format.ts";

export interface CallRow {
  account_id: string;
  artifact_id: number;
  starts_at: string;
  title: string | null;
  duration_sec: number | null;
  call_analysis_id: string | null;
  summary: string | null;
  call_type: string | null;
  is_qualified: boolean | null;
  icp_fit_score: number | null;
  qualification_reasoning: string | null;
  next_step_type: string | null;
  next_step_summary: string | null;
  next_step_proposed: string | null;
  scorecard_total: number | null;
  rep_id: string | null;
  markers: { ts: number; label: string; status: string }[];
}

/**
 * The call shape (SPEC "call") of calls `c`. `artifact_id` is a bigint identity: float8 keeps it a
 * JSON number on both drivers, exact below 2^53.
 */
export const CALL_COLUMNS = sql`
  c.account_id,
  c.artifact_id::float8 as artifact_id,
  ${isoMs(sql`c.starts_at`)} as starts_at,
  c.title,
  c.duration_sec,
  c.call_analysis_id,
  c.summary,
  c.call_type,
  c.is_qualified,
  c.icp_fit_score::float8 as icp_fit_score,
  c.qualification_reasoning,
  c.next_step_type,
  c.next_step_summary,
  c.next_step_proposed,
  c.scorecard_total::float8 as scorecard_total,
  c.rep_id,
  c.markers`;

export interface CallsPageParams {
  /** Calls starting in the window; none → every call. */
  window?: ReportWindow;
  limit: number;
  offset: number;
}

/**
 * One page of the account's analyzed calls (those with an analysis), newest first; the page is cut
 * before the rows are shaped (PostgreSQL shapes every row an offset skips).
 */
export async function callsPage(db: Sql, accountId: string, params: CallsPageParams) {
  const w = params.window;
  return ownedRows(
    await rows<CallRow>(
      db,
      sql`
      with page as (
        select c.artifact_id, c.starts_at
        from calls c
        where c.account_id = ${accountId} and c.call_analysis_id is not null
          ${w ? sql`and c.starts_at >= ${w.start}::timestamptz and c.starts_at < ${w.end}::timestamptz` : sql``}
        order by c.starts_at desc, c.artifact_id desc
        limit ${params.limit} offset ${params.offset}
      )
      select ${CALL_COLUMNS}
      from page p
      join calls c on c.account_id = ${accountId} and c.artifact_id = p.artifact_id
      order by p.starts_at desc, p.artifact_id desc`,
    ),
  );
}
