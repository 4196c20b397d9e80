import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface AuditEntry {
  key_id: string;
  method: string;
  path: string;
  scope: string;
  status: number;
  ip: string;
  occurred_at: string;
}

/**
 * Writes one account's audit rows and moves its keys' `last_used_at` forward, in one statement: on
 * the embedded database each statement's parse and plan is most of the cost. Its text is the same
 * for every batch (the entries travel as one jsonb value), so PostgreSQL keeps it prepared.
 */
export async function insertAuditEntries(
  db: Sql,
  accountId: string,
  params: { entries: readonly AuditEntry[] },
): Promise<void> {
  await rows(
    db,
    sql`
    with e as (
      select *
      from jsonb_to_recordset(${JSON.stringify(params.entries)}::jsonb)
        as e(key_id uuid, method text, path text, scope text, status int, ip text, occurred_at timestamptz)
    ), inserted as (
      insert into audit_log (account_id, key_id, method, path, scope, status, ip, occurred_at)
      select ${accountId}, key_id, method, path, scope, status, ip, occurred_at from e
    )
    update api_keys k
    set last_used_at = greatest(k.last_used_at, u.used_at)
    from (select key_id, max(occurred_at) as used_at from e group by key_id) u
    where k.account_id = ${accountId} and k.id = u.key_id`,
    { prepare: true },
  );
}
