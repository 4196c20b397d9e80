import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * The account of a connector of this kind and its sealed signing secret (null: none), or null when
 * no connector of this kind has the id (migration 0033's `ascribe_connector_hook`: a hook request
 * knows the connector id before it knows the account).
 */
export async function connectorOfHook(
  db: Sql,
  params: { id: string; kind: string },
): Promise<{ accountId: string; sealed: string | null } | null> {
  const found = await rows<{ accountId: string; sealed: string | null }>(
    db,
    sql`select account_id::text as "accountId", secret_sealed as sealed
        from ascribe_connector_hook(${params.id}::uuid, ${params.kind})`,
  );
  return found[0] ?? null;
}
