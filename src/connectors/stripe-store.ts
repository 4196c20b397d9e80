import type { SecretBox } from "../crypto/secret-box.ts";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { importKinds } from "../import/kinds.ts";
import { type CrmEvent, crmEventSchema } from "../ingest/crm-event.ts";
import { purchaseRecordSchema } from "../ingest/import-records.ts";
import { type IngestResult, ingestCrmEvents } from "../ingest/ingest-events.ts";
import { claimConnectorDelivery } from "../queries/claim-connector-delivery.ts";
import { saleOfPayment } from "../queries/sale-of-payment.ts";
import { eventHashes } from "../queries/upsert-event.ts";
import type { AdjustmentAction, StripeAction } from "./stripe-events.ts";

export type StripeOutcome =
  | ({ outcome: "stored" } & IngestResult)
  | { outcome: "duplicate" }
  | { outcome: "ignored"; reason: string };

function validEvent(event: CrmEvent): CrmEvent {
  const parsed = crmEventSchema.safeParse(event);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ApiError.validation(`${issue?.path.join(".") ?? "event"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

async function exists(tx: Sql, accountId: string, id: string): Promise<boolean> {
  return (await eventHashes(tx, accountId, { ids: [id] })).has(id);
}

async function adjustmentEvent(tx: Sql, accountId: string, a: AdjustmentAction): Promise<CrmEvent> {
  // The sale's contact and product, so sale counting credits the adjustment to that purchase's group.
  const sale = await saleOfPayment(tx, accountId, { ids: a.saleIds });
  return {
    id: a.id,
    event_type: "payment",
    event_datetime: a.at,
    contact_email: sale?.contact_email ?? a.email,
    contact_phone: sale?.contact_phone ?? null,
    contact_name: sale?.contact_name ?? a.name,
    amount: a.amount,
    currency: sale?.currency ?? a.currency,
    product_key: sale?.product_key ?? null,
    product_name: sale?.product_name ?? null,
    payment_status: a.status,
    cancelled_at: a.cancelledAt,
  };
}

/**
 * Stores what one Stripe delivery carries, in the caller's transaction: the delivery claimed first
 * (a resent copy changes nothing), then the sale or adjustment through the same ingest as the
 * signed webhook and imports (identity, enrichment, ad resolution, sale counting), and the sale's
 * purchase. The connector's last event time is the caller's to record, after the commit.
 */
export async function storeStripeAction(
  tx: Sql,
  accountId: string,
  params: { connectorId: string; deliveryId: string; action: StripeAction; at: Date; secrets: SecretBox },
): Promise<StripeOutcome> {
  const { connectorId, deliveryId, action, at, secrets } = params;
  if (!(await claimConnectorDelivery(tx, accountId, { connectorId, deliveryId, receivedAt: at })))
    return { outcome: "duplicate" };
  if (action.kind === "ignored") return { outcome: "ignored", reason: action.reason };

  if (action.kind === "sale") {
    const event = validEvent(action.event);
    if (action.weak && (await exists(tx, accountId, event.id)))
      return {
        outcome: "ignored",
        reason: "this payment's sale is already recorded from its checkout or invoice",
      };
    const result = await ingestCrmEvents(tx, accountId, [event], { origin: "webhook" });
    const purchase = purchaseRecordSchema.safeParse({
      id: event.id,
      purchase_date: event.event_datetime,
      contact_email: event.contact_email,
      contact_name: event.contact_name,
      product_key: event.product_key,
      product_name: event.product_name,
      amount: event.amount,
      currency: event.currency,
    });
    // A purchase names its buyer by email: a payment without one is a sale event only.
    if (purchase.success) await importKinds.purchases.write(tx, accountId, [purchase.data], { secrets });
    return { outcome: "stored", ...result };
  }

  if (action.onlyIfAbsent && (await exists(tx, accountId, action.id)))
    return {
      outcome: "ignored",
      reason: "the charge's refunded total is already recorded (charge.refunded)",
    };
  const event = validEvent(await adjustmentEvent(tx, accountId, action));
  return { outcome: "stored", ...(await ingestCrmEvents(tx, accountId, [event], { origin: "webhook" })) };
}
