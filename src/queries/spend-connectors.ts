import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** Every account's Meta and Google connectors (migration 0032), for the sync schedule; administration only. */
export async function spendConnectors(
  db: Sql,
): Promise<{ accountId: string; id: string; kind: "meta" | "google" }[]> {
  return rows<{ accountId: string; id: string; kind: "meta" | "google" }>(
    db,
    sql`select account_id::text as "accountId", id::text as id, kind from ascribe_spend_connectors()`,
  );
}
