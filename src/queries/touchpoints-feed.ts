import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { TOUCHPOINT_COLUMNS, type TouchpointRow } from "./touchpoint-shape.ts";

export interface TouchpointsPageParams {
  kind?: "web" | "conversion";
  /** Touchpoints that occurred in the window; none → all. */
  window?: ReportWindow;
  limit: number;
  offset: number;
}

/**
 * One page of the account's touchpoints, newest first (occurred_at, then id, descending). The page
 * is cut on keys alone first (touchpoints_occurred_idx): the rows a deep offset skips are never
 * shaped.
 */
export async function touchpointsPage(db: Sql, accountId: string, params: TouchpointsPageParams) {
  const w = params.window;
  return ownedRows(
    await rows<TouchpointRow>(
      db,
      sql`
      with page as (
        select t.id, t.occurred_at
        from touchpoints t
        where t.account_id = ${accountId}
          ${params.kind ? sql`and t.kind = ${params.kind}` : sql``}
          ${w ? sql`and t.occurred_at >= ${w.start}::timestamptz and t.occurred_at < ${w.end}::timestamptz` : sql``}
        order by t.occurred_at desc, t.id desc
        limit ${params.limit} offset ${params.offset}
      )
      select ${TOUCHPOINT_COLUMNS}
      from page p
      join touchpoints t on t.account_id = ${accountId} and t.id = p.id
      left join contacts c on c.account_id = t.account_id and c.id = t.contact_id
      order by p.occurred_at desc, p.id desc`,
    ),
  );
}
