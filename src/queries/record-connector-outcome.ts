import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

/**
 * What a connector last did, for `ascribe connectors list|test`: a delivery taken (last_event_at),
 * or one refused (last_error and its time; the message never carries the secret or the payload).
 */
export async function recordConnectorOutcome(
  db: Sql,
  accountId: string,
  params: { connectorId: string; at: Date; error: string | null },
): Promise<void> {
  const at = params.at.toISOString();
  await db.execute(
    params.error === null
      ? sql`
          update connectors set last_event_at = ${at}::timestamptz
          where account_id = ${accountId} and id = ${params.connectorId}::uuid
            -- Deliveries finish out of order: the latest time stays.
            and (last_event_at is null or last_event_at < ${at}::timestamptz)`
      : sql`
          update connectors set last_error = ${params.error}, last_error_at = ${at}::timestamptz
          where account_id = ${accountId} and id = ${params.connectorId}::uuid`,
  );
}
