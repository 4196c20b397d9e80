import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

export interface ConnectorOutcome {
  connectorId: string;
  at: Date;
  /** Null: a delivery taken; else why one was refused (never the secret or the payload). */
  error: string | null;
}

/**
 * What connectors last did, for `ascribe connectors list|test`, in one statement for a batch of
 * outcomes: a delivery taken moves `last_event_at` forward (deliveries finish out of order: the
 * latest time stays); a refusal sets `last_error`, the batch's last one winning.
 */
export async function recordConnectorOutcomes(
  db: Sql,
  accountId: string,
  params: { outcomes: readonly ConnectorOutcome[] },
): Promise<void> {
  if (params.outcomes.length === 0) return;
  const batch = JSON.stringify(
    params.outcomes.map((o, n) => ({
      n,
      connector_id: o.connectorId,
      at: o.at.toISOString(),
      error: o.error,
    })),
  );
  await db.execute(sql`
    update connectors c
    set last_event_at = greatest(c.last_event_at, o.event_at),
        last_error = coalesce(o.error, c.last_error),
        last_error_at = coalesce(o.error_at, c.last_error_at)
    from (
      select connector_id,
             max(at) filter (where error is null) as event_at,
             (array_agg(error order by n desc) filter (where error is not null))[1] as error,
             (array_agg(at order by n desc) filter (where error is not null))[1] as error_at
      from jsonb_to_recordset(${batch}::jsonb) as x(n int, connector_id uuid, at timestamptz, error text)
      group by connector_id
    ) o
    where c.account_id = ${accountId} and c.id = o.connector_id`);
}
