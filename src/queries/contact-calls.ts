import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { CALL_COLUMNS, type CallRow } from "./calls-list.ts";

/** SPEC, Limits: the call lookback of contacts/calls. */
export const CONTACT_CALLS_LOOKBACK_DAYS = 365;

/**
 * The calls of the last 365 days (before `now`) in which `email` (normalized) took part, newest
 * first, in the call shape plus `contact_email`: the email's range of call_participants, then each
 * call by its key.
 */
export async function contactCalls(db: Sql, accountId: string, params: { email: string; now: Date }) {
  const since = new Date(params.now.getTime() - CONTACT_CALLS_LOOKBACK_DAYS * 86_400_000).toISOString();
  return ownedRows(
    await rows<CallRow & { contact_email: string }>(
      db,
      sql`
      select ${CALL_COLUMNS}, p.email as contact_email
      from call_participants p
      join calls c on c.account_id = ${accountId} and c.artifact_id = p.artifact_id
      where p.account_id = ${accountId} and p.email = ${params.email}
        and p.starts_at >= ${since}::timestamptz
      order by p.starts_at desc, p.artifact_id desc`,
    ),
  );
}
