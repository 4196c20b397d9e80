import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface StoredSale {
  id: string;
  contact_email: string | null;
  contact_phone: string | null;
  contact_name: string | null;
  product_key: string | null;
  product_name: string | null;
  currency: string | null;
}

/**
 * The stored sale or payment event among candidate ids (a refund or dispute names its payment by
 * payment intent or by charge), so the adjustment lands on the same contact and product: the first
 * candidate found, in the order given.
 */
export async function saleOfPayment(
  db: Sql,
  accountId: string,
  params: { ids: readonly string[] },
): Promise<StoredSale | null> {
  if (params.ids.length === 0) return null;
  const found = await rows<StoredSale & { rank: number }>(
    db,
    sql`
      select e.id, e.contact_email, e.contact_phone, e.contact_name, e.product_key, e.product_name,
             e.currency, c.rank::int as rank
      from events e
      join jsonb_array_elements_text(${JSON.stringify(params.ids)}::jsonb) with ordinality as c(id, rank)
        on c.id = e.id
      where e.account_id = ${accountId} and e.event_type in ('sale', 'payment')
      order by c.rank
      limit 1`,
  );
  const sale = found[0];
  if (!sale) return null;
  const { rank: _rank, ...stored } = sale;
  return stored;
}
