import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { CALL_COLUMNS, type CallRow } from "./calls-list.ts";

/** SPEC, Limits: the call lookback of contacts/calls. */
export const CONTACT_CALLS_LOOKBACK_DAYS = 365;

/**
 * The calls of the last 365 days (before `now`) in which `email` (normalized) took part, newest
 * first, in the call shape plus `contact_email`.
 */
export async function contactCalls(db: Sql, accountId: string, params: { email: string; now: Date }) {
  const since = new Date(params.now.getTime() - CONTACT_CALLS_LOOKBACK_DAYS * 86_400_000).toISOString();
  return ownedRows(
    await rows<CallRow & { contact_email: string }>(
      db,
      sql`
      select ${CALL_COLUMNS}, ${params.email}::text as contact_email
      from calls c
      where c.account_id = ${accountId}
        and c.participant_emails @> array[${params.email}::text]
        and c.starts_at >= ${since}::timestamptz
      order by c.starts_at desc, c.artifact_id desc`,
    ),
  );
}
