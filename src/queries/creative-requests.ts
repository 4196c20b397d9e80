import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";

export const CREATIVE_REQUEST_STATUSES = ["open", "partial", "filled", "cancelled"] as const;

export interface CreativeRequestsParams {
  /** Only this status; none → the needs in progress (`open` and `partial`). */
  status?: (typeof CREATIVE_REQUEST_STATUSES)[number];
  /** Only needs never relayed to a team (`notified_at` unset). */
  unnotified: boolean;
  limit: number;
}

export interface CreativeRequestRow {
  account_id: string;
  id: string;
  reason: string;
  status: (typeof CREATIVE_REQUEST_STATUSES)[number];
  requested_count: number;
  filled_count: number;
  context: unknown;
  created_at: string;
  notified_at: string | null;
}

/** The account's creative needs, oldest to newest. */
export async function creativeRequests(db: Sql, accountId: string, params: CreativeRequestsParams) {
  const statuses = params.status ? [params.status] : ["open", "partial"];
  return ownedRows(
    await rows<CreativeRequestRow>(
      db,
      sql`
      select r.account_id, r.id::text as id, r.reason, r.status, r.requested_count, r.filled_count,
             r.context, ${isoMs(sql`r.created_at`)} as created_at, ${isoMs(sql`r.notified_at`)} as notified_at
      from creative_requests r
      where r.account_id = ${accountId}
        and r.status in (${sql.join(
          statuses.map((s) => sql`${s}`),
          sql`, `,
        )})
        ${params.unnotified ? sql`and r.notified_at is null` : sql``}
      order by r.created_at, r.id
      limit ${params.limit}`,
    ),
  );
}
