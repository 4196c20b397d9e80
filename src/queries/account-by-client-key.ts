import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Runs inside `db.clientKeyLookup(clientKey)`: RLS shows only the account with that client key. */
export async function accountByClientKey(
  db: Sql,
  clientKey: string,
): Promise<{ id: string; plan: string } | null> {
  const found = await rows<{ id: string; plan: string }>(
    db,
    sql`select id, plan from accounts where client_key = ${clientKey}`,
    { prepare: true },
  );
  return found[0] ?? null;
}
