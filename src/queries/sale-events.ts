import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { SaleEvent } from "../ingest/sale-counting.ts";

/** A sale-type event as sale counting reads it, with the contact it belongs to. */
export type SaleEventRow = SaleEvent & { contact_id: string | null };

const COLUMNS = sql`id, contact_id, event_type, (extract(epoch from event_datetime) * 1000)::float8 as at,
  product_key, amount::float8 as amount, value::float8 as value, is_paid, payment_status, is_baseline,
  cancelled_at is not null as cancelled`;

/**
 * The statement `saleEvents` runs. Some contacts' sales are read contact by contact, each through
 * the contact's own index range (events_contact_idx; `offset 0` keeps the planner from flattening
 * the loop into one join): read as one set filtered by the contacts, a plan made on the statistics
 * of a nearly empty table walked all of the account's sales instead, for every batch (a fresh
 * database's Stripe deliveries fell from 330 to 181 a second within 40 seconds).
 */
export function saleEventsQuery(accountId: string, params: { contactIds?: readonly string[] } = {}): SQL {
  if (!params.contactIds)
    return sql`
      select ${COLUMNS} from events
      where account_id = ${accountId} and event_type in ('sale', 'payment')
      order by contact_id nulls last, event_datetime, id`;
  return sql`
    select e.* from (select distinct unnest(${`{${params.contactIds.join(",")}}`}::uuid[])) as c(contact_id)
    cross join lateral (
      select ${COLUMNS} from events
      where account_id = ${accountId} and contact_id = c.contact_id and event_type in ('sale', 'payment')
      offset 0
    ) e
    order by e.contact_id, e.at, e.id`;
}

/** Sale and payment events of the account (or of some contacts), grouped by contact in time order. */
export async function saleEvents(
  db: Sql,
  accountId: string,
  params: { contactIds?: readonly string[] } = {},
): Promise<SaleEventRow[]> {
  return rows<SaleEventRow>(db, saleEventsQuery(accountId, params), { prepare: true });
}
