import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";
import type { SaleRule } from "../ingest/sale-counting.ts";

/** Stores the account's sale rule (the whole rule: what is stored is what counts). */
export async function replaceSaleRule(db: Sql, accountId: string, params: { rule: SaleRule }): Promise<void> {
  await db.execute(sql`
    insert into account_settings (account_id, sale_rule)
    values (${accountId}, ${JSON.stringify(params.rule)}::jsonb)
    on conflict (account_id) do update set sale_rule = excluded.sale_rule, updated_at = now()`);
}
