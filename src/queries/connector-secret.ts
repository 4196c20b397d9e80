import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** A connector's sealed signing secret (null: none), or undefined when the account has no such connector. */
export async function connectorSealedSecret(
  db: Sql,
  accountId: string,
  params: { id: string },
): Promise<string | null | undefined> {
  const found = await rows<{ sealed: string | null }>(
    db,
    sql`select secret_sealed as sealed from connectors where account_id = ${accountId} and id = ${params.id}::uuid`,
  );
  return found.length === 0 ? undefined : (found[0]?.sealed ?? null);
}
