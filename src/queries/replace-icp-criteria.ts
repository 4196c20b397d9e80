import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

export async function replaceIcpCriteria(
  db: Sql,
  accountId: string,
  params: { criteria: Record<string, unknown> },
): Promise<void> {
  await db.execute(sql`
    insert into icp_criteria (account_id, criteria, updated_at)
    values (${accountId}, ${JSON.stringify(params.criteria)}::jsonb, now())
    on conflict (account_id) do update set criteria = excluded.criteria, updated_at = excluded.updated_at`);
}
