import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
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

/**
 * The account's customers (contacts who bought), newest first, with their purchases' totals and
 * the contact's first CRM event and latest lead (docs/metrics.md "Contacts").
 */
export async function contactsCustomers(db: Sql, accountId: string) {
  // For this transaction only (SET LOCAL): tens of thousands of customers are sorted in memory.
  await db.execute(sql`select set_config('work_mem', '32MB', true)`);
  return ownedRows(
    await rows<CustomerRow>(
      db,
      sql`
      select
        cu.account_id,
        cu.id::text as id,
        c.email as contact_email,
        coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')) as contact_name,
        c.phone as contact_phone,
        c.id::text as contact_id,
        fe.event_type as first_event_type,
        ${isoMs(sql`fe.event_datetime`)} as first_event_date,
        ${isoMs(sql`fe.lead_at`)} as latest_lead_date,
        ${isoMs(sql`p.first_payment_at`)} as first_payment_date,
        cu.commission_status,
        ${isoMs(sql`cu.commission_expires_at`)} as commission_expires_at,
        coalesce(p.total_revenue, 0)::float8 as total_revenue,
        coalesce(p.total_purchases, 0) as total_purchases,
        coalesce(p.total_commission, 0)::float8 as total_commission,
        coalesce(pr.products, '{}') as products,
        ${isoMs(sql`cu.created_at`)} as created_at
      from customers cu
      -- Each customer's contact by its key: reads only this account's customers' contacts, where a
      -- hash join would scan every account's contacts.
      join lateral (
        select c.id, c.email, c.name, c.first_name, c.last_name, c.phone from contacts c
        where c.account_id = ${accountId} and c.id = cu.contact_id
        limit 1
      ) c on true
      left join lateral (
        -- One pass over the contact's events for both: its first event and its latest lead.
        select
          (array_agg(e.event_type order by e.event_datetime, e.id))[1] as event_type,
          min(e.event_datetime) as event_datetime,
          max(e.event_datetime) filter (where e.event_type = 'lead') as lead_at
        from events e
        where e.account_id = cu.account_id and e.contact_id = cu.contact_id
      ) fe on true
      left join lateral (
        select
          min(x.purchase_date) as first_payment_at,
          sum(x.amount) as total_revenue,
          count(*)::int as total_purchases,
          sum(round(coalesce(x.commission_amount, x.amount * x.commission_rate, 0), 2))
            filter (where x.commissionable) as total_commission
        from purchases x
        where x.account_id = cu.account_id and x.contact_id = cu.contact_id
      ) p on true
      left join lateral (
        -- One name per product: purchases are grouped by key (by name when they have none).
        select array_agg(g.label order by g.label) as products
        from (
          select coalesce(max(x.product_name), max(x.product_key)) as label
          from purchases x
          where x.account_id = cu.account_id and x.contact_id = cu.contact_id
            and coalesce(x.product_key, x.product_name) is not null
          group by coalesce(x.product_key, x.product_name)
        ) g
      ) pr on true
      where cu.account_id = ${accountId}
      order by cu.created_at desc, cu.id desc`,
    ),
  );
}
