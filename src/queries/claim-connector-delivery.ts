import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Claims a vendor delivery (Stripe's event id) for a connector: true the first time, false for a
 * resent copy. Claimed in the transaction that stores what the delivery carries, so a copy racing
 * the first waits on the key until that one commits or rolls back.
 */
export async function claimConnectorDelivery(
  db: Sql,
  accountId: string,
  params: { connectorId: string; deliveryId: string; receivedAt: Date },
): Promise<boolean> {
  const claimed = await rows<{ delivery_id: string }>(
    db,
    sql`
      insert into connector_deliveries (account_id, connector_id, delivery_id, received_at)
      values (${accountId}, ${params.connectorId}::uuid, ${params.deliveryId}, ${params.receivedAt.toISOString()}::timestamptz)
      on conflict do nothing
      returning delivery_id`,
  );
  return claimed.length === 1;
}
