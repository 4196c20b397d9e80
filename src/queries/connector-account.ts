import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * The account of a connector of this kind, or null (migration 0030's `ascribe_connector_account`:
 * a hook request knows the connector id before it knows the account).
 */
export async function connectorAccount(
  db: Sql,
  params: { id: string; kind: string },
): Promise<string | null> {
  const found = await rows<{ account_id: string | null }>(
    db,
    sql`select ascribe_connector_account(${params.id}::uuid, ${params.kind})::text as account_id`,
  );
  return found[0]?.account_id ?? null;
}
