import { type SQL, sql } from "drizzle-orm";
import { AccountRows } from "../db/account-rows.ts";
import { rows, type Sql } from "../db/client.ts";
import { cursorRows } from "../db/cursor.ts";
import { ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";

export interface CustomerRow {
  account_id: string;
  id: string;
  contact_email: string | null;
  contact_name: string | null;
  contact_phone: string | null;
  contact_id: string;
  first_event_type: string | null;
  first_event_date: string | null;
  latest_lead_date: string | null;
  first_payment_date: string | null;
  commission_status: string | null;
  commission_expires_at: string | null;
  total_revenue: number;
  total_purchases: number;
  total_commission: number;
  products: string[];
  created_at: string;
}

/** A slice of the list: `limit` rows (all when absent) after the first `offset`. */
export interface CustomersPage {
  limit?: number;
  offset?: number;
}

/**
 * The account's customers (contacts who bought), newest first (then id: a total order, so pages
 * partition the list), with their purchases' totals and the contact's first CRM event and latest
 * lead (docs/metrics.md "Contacts"). Read from customer_totals, the read model triggers keep on
 * customers, purchases and events (migration 0027), with the contact's fields (0042): an index range
 * in the list's order, no contact read per row. Past an offset, the rows skipped are only index
 * entries: the slice's keys are cut from customer_totals_created_idx alone, and only its rows are
 * read and formatted (at scale 100, offset 17,300: every skipped row was fetched and formatted).
 */
export function customersQuery(accountId: string, page: CustomersPage): SQL {
  const offset = page.offset ?? 0;
  return sql`
    select
      t.account_id,
      t.customer_id::text as id,
      t.contact_email,
      t.contact_name,
      t.contact_phone,
      t.contact_id::text as contact_id,
      t.first_event_type,
      ${isoMs(sql`t.first_event_at`)} as first_event_date,
      ${isoMs(sql`t.latest_lead_at`)} as latest_lead_date,
      ${isoMs(sql`t.first_payment_at`)} as first_payment_date,
      t.commission_status,
      ${isoMs(sql`t.commission_expires_at`)} as commission_expires_at,
      t.total_revenue::float8 as total_revenue,
      t.total_purchases,
      t.total_commission::float8 as total_commission,
      -- As JSON: the driver parses one JSON text per row faster than a text[] literal, to the same array.
      to_json(t.products) as products,
      ${isoMs(sql`t.created_at`)} as created_at
    from ${
      offset === 0
        ? sql`customer_totals t
    where t.account_id = ${accountId}
    order by t.created_at desc, t.customer_id desc
    limit ${page.limit ?? null}::int`
        : sql`(
      select k.created_at, k.customer_id from customer_totals k
      where k.account_id = ${accountId}
      order by k.created_at desc, k.customer_id desc
      limit ${page.limit ?? null}::int offset ${offset}::int
    ) p
    join customer_totals t
      on t.account_id = ${accountId} and t.created_at = p.created_at and t.customer_id = p.customer_id
    order by p.created_at desc, p.customer_id desc`
    }`;
}

export async function contactsCustomers(db: Sql, accountId: string, params: CustomersPage = {}) {
  return ownedRows(await rows<CustomerRow>(db, customersQuery(accountId, params)));
}

/**
 * The same list, `batch` rows at a time from one cursor (inside the caller's transaction), each row
 * with its `account_id` for the streamed answer's barrier (AccountRows).
 */
export async function* contactsCustomersBatches(
  db: Sql,
  accountId: string,
  params: CustomersPage & { batch: number },
) {
  for await (const found of cursorRows<CustomerRow>(db, customersQuery(accountId, params), params.batch)) {
    yield new AccountRows(found);
  }
}
