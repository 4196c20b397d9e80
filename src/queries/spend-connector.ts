import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * The account's connectors of one spend platform, oldest first, with their sealed credentials (for
 * the sync only: never answered by a route or `connectors list`).
 */
export async function spendConnector(
  db: Sql,
  accountId: string,
  params: { kind: "meta" | "google"; id: string | null },
): Promise<{ id: string; sealed: string | null }[]> {
  return rows<{ id: string; sealed: string | null }>(
    db,
    sql`
      select id::text as id, credentials_sealed as sealed from connectors
      where account_id = ${accountId} and kind = ${params.kind}
        and (${params.id}::uuid is null or id = ${params.id}::uuid)
      order by created_at, id`,
  );
}
