import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { SaleCount } from "../ingest/sale-counting.ts";

/** One event's verdict; the group totals are set on a purchase's opening event only. */
export interface SaleVerdict extends SaleCount {
  group_revenue: number | null;
  group_refunds: number | null;
  group_disputes: number | null;
}

/** Writes sale counting's verdicts onto the events, only where they changed. */
export async function updateSaleCounts(
  db: Sql,
  accountId: string,
  params: { counts: readonly SaleVerdict[] },
): Promise<void> {
  if (params.counts.length === 0) return;
  await rows(
    db,
    sql`
    update events e
    set counted = c.counted, drop_reason = c.drop_reason, group_key = c.group_key,
        contact_seq = c.contact_seq, group_revenue = c.group_revenue,
        group_refunds = c.group_refunds, group_disputes = c.group_disputes, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(params.counts)}::jsonb)
      as c(id text, counted boolean, drop_reason text, group_key text, contact_seq int,
           group_revenue numeric, group_refunds numeric, group_disputes numeric)
    where e.account_id = ${accountId} and e.id = c.id
      and (e.counted, e.drop_reason, e.group_key, e.contact_seq,
           e.group_revenue, e.group_refunds, e.group_disputes)
          is distinct from (c.counted, c.drop_reason, c.group_key, c.contact_seq,
           c.group_revenue, c.group_refunds, c.group_disputes)`,
    { prepare: true },
  );
}
