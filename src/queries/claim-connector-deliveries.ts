import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface ConnectorDelivery {
  connectorId: string;
  deliveryId: string;
  receivedAt: Date;
}

/**
 * Claims vendor deliveries (Stripe's event ids) for their connectors in one statement: for each, in
 * order, true the first time, false for a resent copy (already stored, or named earlier in the same
 * list). Claimed in the transaction that stores what the deliveries carry, so a copy racing the
 * first waits on the key until that one commits or rolls back.
 */
export async function claimConnectorDeliveries(
  db: Sql,
  accountId: string,
  params: { deliveries: readonly ConnectorDelivery[] },
): Promise<boolean[]> {
  const { deliveries } = params;
  if (deliveries.length === 0) return [];
  const claimed = await rows<{ connector_id: string; delivery_id: string }>(
    db,
    sql`
      insert into connector_deliveries (account_id, connector_id, delivery_id, received_at)
      select ${accountId}, d.connector_id, d.delivery_id, d.received_at
      from jsonb_to_recordset(${JSON.stringify(
        deliveries.map((d, n) => ({
          n,
          connector_id: d.connectorId,
          delivery_id: d.deliveryId,
          received_at: d.receivedAt.toISOString(),
        })),
      )}::jsonb) as d(n int, connector_id uuid, delivery_id text, received_at timestamptz)
      order by d.n
      on conflict do nothing
      returning connector_id::text as connector_id, delivery_id`,
  );
  const fresh = new Set(claimed.map((c) => `${c.connector_id} ${c.delivery_id}`));
  // A copy later in the list than its first: the first took the claim.
  return deliveries.map((d) => fresh.delete(`${d.connectorId.toLowerCase()} ${d.deliveryId}`));
}
