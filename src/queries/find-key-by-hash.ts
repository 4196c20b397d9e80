import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface KeyRecord {
  key_id: string;
  account_id: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  plan: "free" | "pro" | "business";
  timezone: string;
  currency: string;
}

/** Runs inside `db.keyLookup(hash)`: RLS lets this transaction see only the presented key. */
export async function findKeyByHash(db: Sql, keyHash: string): Promise<KeyRecord | null> {
  const found = await rows<KeyRecord>(
    db,
    sql`
      select k.id as key_id, k.account_id, k.scopes, k.expires_at, k.revoked_at,
             a.plan, a.timezone, a.currency
      from api_keys k
      join accounts a on a.id = k.account_id
      where k.key_hash = ${keyHash}`,
    { prepare: true },
  );
  const row = found[0];
  if (!row) return null;
  // node-postgres parses timestamptz into Date; PGlite too, but raw `execute` may hand strings.
  return {
    ...row,
    expires_at: row.expires_at === null ? null : new Date(row.expires_at),
    revoked_at: row.revoked_at === null ? null : new Date(row.revoked_at),
  };
}
