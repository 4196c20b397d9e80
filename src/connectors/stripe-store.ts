import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { importKinds } from "../import/kinds.ts";
import { type CrmEvent, crmEventSchema } from "../ingest/crm-event.ts";
import { purchaseRecordSchema } from "../ingest/import-records.ts";
import { type EventOutcome, type IngestResult, ingestCrmEventsById } from "../ingest/ingest-events.ts";
import { claimConnectorDeliveries } from "../queries/claim-connector-deliveries.ts";
import { saleOfPayment } from "../queries/sale-of-payment.ts";
import { storedEvents } from "../queries/upsert-event.ts";
import type { AdjustmentAction, SaleAction, StripeAction } from "./stripe-events.ts";

export type StripeOutcome =
  | ({ outcome: "stored" } & IngestResult)
  | { outcome: "duplicate" }
  | { outcome: "ignored"; reason: string };

/** One verified delivery of a connector. */
export interface StripeDelivery {
  connectorId: string;
  deliveryId: string;
  action: StripeAction;
  at: Date;
}

/** A sale event as the API would take it; a refusal names the field (400, nothing stored). */
export function validEvent(event: CrmEvent): CrmEvent {
  const parsed = crmEventSchema.safeParse(event);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ApiError.validation(`${issue?.path.join(".") ?? "event"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
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

const stored = (outcome: EventOutcome | undefined): StripeOutcome => ({
  outcome: "stored",
  inserted: outcome === "inserted" ? 1 : 0,
  updated: outcome === "updated" ? 1 : 0,
  unchanged: outcome === "inserted" || outcome === "updated" ? 0 : 1,
});

const eventIdOf = (action: SaleAction | AdjustmentAction) =>
  action.kind === "sale" ? action.event.id : action.id;

/**
 * Stores what a batch of deliveries carries (group-committed, stripe-route.ts), in the caller's
 * transaction, with the outcome of each as if they had been stored one after the other in arrival
 * order: each delivery claimed first (a resent copy changes nothing), then the sales and
 * adjustments through the same ingest as the signed webhook and imports (identity, enrichment, ad
 * resolution, sale counting), and the sales' purchases. Deliveries naming the same event (a
 * checkout and its charge, a charge's refunds) are stored in arrival order, one round each; within
 * a round, the sales before the adjustments, so a refund finds a sale of the same batch. The
 * connector's last event time is the caller's to record, after the commit.
 */
export async function storeStripeDeliveries(
  tx: Sql,
  accountId: string,
  deliveries: readonly StripeDelivery[],
  secrets: SecretBox,
  adIndexes?: AdIndexCache,
): Promise<StripeOutcome[]> {
  const outcomes: StripeOutcome[] = [];
  const rounds: { index: number; action: SaleAction | AdjustmentAction }[][] = [];
  const seen = new Map<string, number>();
  const claims = await claimConnectorDeliveries(tx, accountId, {
    deliveries: deliveries.map((d) => ({
      connectorId: d.connectorId,
      deliveryId: d.deliveryId,
      receivedAt: d.at,
    })),
  });
  for (const [index, d] of deliveries.entries()) {
    if (!claims[index]) outcomes[index] = { outcome: "duplicate" };
    else if (d.action.kind === "ignored") outcomes[index] = { outcome: "ignored", reason: d.action.reason };
    else {
      const id = eventIdOf(d.action);
      const round = seen.get(id) ?? 0;
      seen.set(id, round + 1);
      rounds[round] ??= [];
      rounds[round].push({ index, action: d.action });
    }
  }
  for (const round of rounds) await storeRound(tx, accountId, round, { secrets, adIndexes }, outcomes);
  return outcomes;
}

/** Deliveries of distinct events (see above); their outcomes written into `outcomes`. */
async function storeRound(
  tx: Sql,
  accountId: string,
  round: readonly { index: number; action: SaleAction | AdjustmentAction }[],
  { secrets, adIndexes }: { secrets: SecretBox; adIndexes?: AdIndexCache },
  outcomes: StripeOutcome[],
): Promise<void> {
  const conditional = round.flatMap(({ action }) =>
    (action.kind === "sale" && action.weak) || (action.kind === "adjustment" && action.onlyIfAbsent)
      ? [eventIdOf(action)]
      : [],
  );
  const existing =
    conditional.length > 0 ? await storedEvents(tx, accountId, { ids: conditional }) : new Map();

  const sales: { index: number; event: CrmEvent }[] = [];
  for (const { index, action } of round) {
    if (action.kind !== "sale") continue;
    const event = validEvent(action.event);
    if (action.weak && existing.has(event.id))
      outcomes[index] = {
        outcome: "ignored",
        reason: "this payment's sale is already recorded from its checkout or invoice",
      };
    else sales.push({ index, event });
  }
  const sold = await ingestCrmEventsById(
    tx,
    accountId,
    sales.map((s) => s.event),
    { origin: "webhook", adIndexes },
  );
  for (const { index, event } of sales) outcomes[index] = stored(sold.byId.get(event.id));
  const purchases = sales.flatMap(({ event }) => {
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
    return purchase.success ? [purchase.data] : [];
  });
  if (purchases.length > 0) await importKinds.purchases.write(tx, accountId, purchases, { secrets });

  const adjustments: { index: number; event: CrmEvent }[] = [];
  for (const { index, action } of round) {
    if (action.kind !== "adjustment") continue;
    if (action.onlyIfAbsent && existing.has(action.id))
      outcomes[index] = {
        outcome: "ignored",
        reason: "the charge's refunded total is already recorded (charge.refunded)",
      };
    else adjustments.push({ index, event: validEvent(await adjustmentEvent(tx, accountId, action)) });
  }
  const adjusted = await ingestCrmEventsById(
    tx,
    accountId,
    adjustments.map((a) => a.event),
    { origin: "webhook", adIndexes },
  );
  for (const { index, event } of adjustments) outcomes[index] = stored(adjusted.byId.get(event.id));
}
