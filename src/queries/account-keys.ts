import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { isoMs } from "./sql-format.ts";

export interface AccountKeyRow {
  id: string;
  prefix: string;
  name: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The account's API keys, oldest first; never the key itself (only its hash is stored). */
export async function accountKeys(db: Sql, accountId: string): Promise<AccountKeyRow[]> {
  return rows<AccountKeyRow>(
    db,
    sql`
      select
        k.id::text as id,
        k.prefix,
        k.name,
        k.scopes,
        ${isoMs(sql`k.created_at`)} as created_at,
        ${isoMs(sql`k.expires_at`)} as expires_at,
        ${isoMs(sql`k.revoked_at`)} as revoked_at,
        ${isoMs(sql`k.last_used_at`)} as last_used_at
      from api_keys k
      where k.account_id = ${accountId}
      order by k.created_at, k.id`,
  );
}
