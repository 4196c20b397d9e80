import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

/**
 * A spend sync's outcome on its connector: a success moves last_sync_at and clears the error; a
 * failure records last_error and its time (the message never carries a credential).
 */
export async function recordConnectorSync(
  db: Sql,
  accountId: string,
  params: { connectorId: string; at: Date; error: string | null },
): Promise<void> {
  const at = params.at.toISOString();
  await db.execute(
    params.error === null
      ? sql`
          update connectors set last_sync_at = ${at}::timestamptz, last_error = null, last_error_at = null
          where account_id = ${accountId} and id = ${params.connectorId}::uuid`
      : sql`
          update connectors set last_error = ${params.error}, last_error_at = ${at}::timestamptz
          where account_id = ${accountId} and id = ${params.connectorId}::uuid`,
  );
}
