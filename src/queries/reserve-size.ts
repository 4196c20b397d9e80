import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** The number of the account's unpublished creatives (the reserve): the import's `en_attente`. */
export async function reserveSize(db: Sql, accountId: string): Promise<number> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`select count(*)::int as n from creatives where account_id = ${accountId} and not is_published`,
  );
  return row?.n ?? 0;
}
