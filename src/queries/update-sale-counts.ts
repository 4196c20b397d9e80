import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";
import type { SaleCount } from "../ingest/sale-counting.ts";

/** Writes sale counting's verdicts onto the events, only where they changed. */
export async function updateSaleCounts(
  db: Sql,
  accountId: string,
  params: { counts: readonly SaleCount[] },
): Promise<void> {
  if (params.counts.length === 0) return;
  await db.execute(sql`
    update events e
    set counted = c.counted, drop_reason = c.drop_reason, group_key = c.group_key,
        contact_seq = c.contact_seq, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(params.counts)}::jsonb)
      as c(id text, counted boolean, drop_reason text, group_key text, contact_seq int)
    where e.account_id = ${accountId} and e.id = c.id
      and (e.counted, e.drop_reason, e.group_key, e.contact_seq)
          is distinct from (c.counted, c.drop_reason, c.group_key, c.contact_seq)`);
}
