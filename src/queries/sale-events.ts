import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { SaleEvent } from "../ingest/sale-counting.ts";

/** A sale-type event as sale counting reads it, with the contact it belongs to. */
export type SaleEventRow = SaleEvent & { contact_id: string | null };

/** Sale and payment events of the account (or of some contacts), grouped by contact in time order. */
export async function saleEvents(
  db: Sql,
  accountId: string,
  params: { contactIds?: readonly string[] } = {},
): Promise<SaleEventRow[]> {
  const onlyContacts = params.contactIds
    ? sql`and contact_id in (select jsonb_array_elements_text(${JSON.stringify(params.contactIds)}::jsonb)::uuid)`
    : sql``;
  return rows<SaleEventRow>(
    db,
    sql`
      select id, contact_id, event_type,
             (extract(epoch from event_datetime) * 1000)::float8 as at,
             product_key, amount::float8 as amount, value::float8 as value,
             is_paid, payment_status, is_baseline, cancelled_at is not null as cancelled
      from events
      where account_id = ${accountId} and event_type in ('sale', 'payment') ${onlyContacts}
      order by contact_id nulls last, event_datetime, id`,
  );
}
