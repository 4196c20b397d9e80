import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Runs inside `db.hostLookup(host)`: RLS shows only that host's registration. */
export async function accountByHost(db: Sql, host: string): Promise<string | null> {
  const found = await rows<{ account_id: string }>(
    db,
    sql`select account_id from tracking_hosts where host = ${host}`,
    { prepare: true },
  );
  return found[0]?.account_id ?? null;
}
