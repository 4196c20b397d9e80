import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { type IngestResult, ingestCrmEvents } from "../ingest/ingest-events.ts";
import { accountTimezone } from "../queries/account-timezone.ts";
import { claimConnectorDeliveries } from "../queries/claim-connector-deliveries.ts";
import { removeEvents } from "../queries/remove-events.ts";
import type { BookingAction } from "./booking-action.ts";
import { validEvent } from "./stripe-store.ts";

export type BookingOutcome =
  | ({ outcome: "stored"; removed: number } & IngestResult)
  | { outcome: "duplicate" }
  | { outcome: "ignored"; reason: string };

/**
 * Stores what one scheduling-tool delivery carries (Calendly, Cal.com), in the caller's
 * transaction: the delivery claimed first (a resent copy changes nothing), then its events through
 * the same ingest as the signed webhook and imports (identity, UTM enrichment, ad resolution, the
 * conversion touchpoint), and the events it takes back removed. `actionIn` maps the delivery with
 * the account's timezone (booking_date / booking_time are the account's calendar values).
 */
export async function storeBookingDelivery(
  tx: Sql,
  accountId: string,
  params: {
    connectorId: string;
    deliveryId: string;
    at: Date;
    actionIn: (timezone: string) => BookingAction;
  },
  adIndexes?: AdIndexCache,
): Promise<BookingOutcome> {
  const { connectorId, deliveryId, at } = params;
  const [claimed] = await claimConnectorDeliveries(tx, accountId, {
    deliveries: [{ connectorId, deliveryId, receivedAt: at }],
  });
  if (!claimed) return { outcome: "duplicate" };
  const timezone = await accountTimezone(tx, accountId);
  if (!timezone) throw new ApiError("not_found", {}, "the connector's account is gone");
  const action = params.actionIn(timezone);
  if (action.kind === "ignored") return { outcome: "ignored", reason: action.reason };
  const events = action.events.map(validEvent);
  const result = await ingestCrmEvents(tx, accountId, events, { origin: "webhook", adIndexes });
  const removed = await removeEvents(tx, accountId, { ids: action.remove });
  return { outcome: "stored", removed: removed.length, ...result };
}
