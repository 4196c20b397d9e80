import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { PurchaseRecord } from "../ingest/import-records.ts";

export type PurchaseOutcome = "inserted" | "updated" | "unchanged";

/**
 * Purchases and the customers they make, two statements for a batch (an import's, or Stripe
 * deliveries stored together): a purchase replaced only when something changed; a purchase makes
 * its contact a customer, and commission terms given with it are kept. As if written one after the
 * other: an id named twice keeps its last version (the earlier ones count as unchanged), and a
 * customer keeps the last terms given for it. Returns each id's outcome.
 */
export async function upsertPurchases(
  db: Sql,
  accountId: string,
  params: { purchases: readonly { record: PurchaseRecord; contactId: string }[] },
): Promise<Map<string, PurchaseOutcome>> {
  const outcomes = new Map<string, PurchaseOutcome>();
  if (params.purchases.length === 0) return outcomes;
  const latest = new Map<string, { record: PurchaseRecord; contactId: string }>();
  for (const p of params.purchases) latest.set(p.record.id, p);
  const batch = JSON.stringify(
    [...latest.values()].map(({ record: p, contactId }) => ({
      id: p.id,
      contact_id: contactId,
      purchase_date: p.purchase_date,
      product_key: p.product_key ?? null,
      product_name: p.product_name ?? null,
      contact_email: p.contact_email,
      contact_name: p.contact_name ?? null,
      amount: p.amount,
      currency: p.currency ?? null,
      commissionable: p.commissionable ?? false,
      commission_rate: p.commission_rate ?? null,
      commission_amount: p.commission_amount ?? null,
      invoice_id: p.invoice_id ?? null,
    })),
  );
  const written = await rows<{ id: string; inserted: boolean }>(
    db,
    sql`
      insert into purchases (account_id, id, contact_id, purchase_date, product_key, product_name, contact_email,
                             contact_name, amount, currency, commissionable, commission_rate, commission_amount,
                             invoice_id)
      -- The contact fields as /contacts/purchases lists them (migration 0041): the contact's email,
      -- else the purchase's; the purchase's name, else the contact's.
      select ${accountId}, p.id, p.contact_id, p.purchase_date, p.product_key, p.product_name,
             coalesce(c.email, p.contact_email), coalesce(p.contact_name, c.name), p.amount, p.currency,
             p.commissionable, p.commission_rate, p.commission_amount, p.invoice_id
      from jsonb_to_recordset(${batch}::jsonb)
        as p(id text, contact_id uuid, purchase_date timestamptz, product_key text, product_name text,
             contact_email text, contact_name text, amount numeric, currency text, commissionable boolean,
             commission_rate numeric, commission_amount numeric, invoice_id text)
      left join contacts c on c.account_id = ${accountId} and c.id = p.contact_id
      -- One global order: two writers never wait on each other in a cycle.
      order by p.id
      on conflict (account_id, id) do update set
        contact_id = excluded.contact_id, purchase_date = excluded.purchase_date, product_key = excluded.product_key,
        product_name = excluded.product_name, contact_email = excluded.contact_email,
        contact_name = excluded.contact_name, amount = excluded.amount, currency = excluded.currency,
        commissionable = excluded.commissionable, commission_rate = excluded.commission_rate,
        commission_amount = excluded.commission_amount, invoice_id = excluded.invoice_id, updated_at = now()
      where (purchases.contact_id, purchases.purchase_date, purchases.product_key, purchases.product_name,
             purchases.contact_name, purchases.amount, purchases.currency, purchases.commissionable,
             purchases.commission_rate, purchases.commission_amount, purchases.invoice_id)
        is distinct from (excluded.contact_id, excluded.purchase_date, excluded.product_key, excluded.product_name,
             excluded.contact_name, excluded.amount, excluded.currency, excluded.commissionable,
             excluded.commission_rate, excluded.commission_amount, excluded.invoice_id)
      returning id, (xmax = 0) as inserted`,
  );
  for (const p of params.purchases) outcomes.set(p.record.id, "unchanged");
  for (const w of written) outcomes.set(w.id, w.inserted ? "inserted" : "updated");

  // Per contact, the terms the last purchase naming them gave (coalesce: one that names none keeps them).
  const terms = new Map<string, { status: string | null; expires: string | null }>();
  for (const { record: p, contactId } of params.purchases) {
    const before = terms.get(contactId);
    terms.set(contactId, {
      status: p.commission_status ?? before?.status ?? null,
      expires: p.commission_expires_at ?? before?.expires ?? null,
    });
  }
  const customers = JSON.stringify(
    [...terms].map(([contactId, t]) => ({
      id: randomUUID(),
      contact_id: contactId,
      commission_status: t.status,
      commission_expires_at: t.expires,
    })),
  );
  await db.execute(sql`
    insert into customers (account_id, id, contact_id, commission_status, commission_expires_at)
    select ${accountId}, c.id, c.contact_id, c.commission_status, c.commission_expires_at
    from jsonb_to_recordset(${customers}::jsonb)
      as c(id uuid, contact_id uuid, commission_status text, commission_expires_at timestamptz)
    order by c.contact_id
    on conflict (account_id, contact_id) do update set
      commission_status = coalesce(excluded.commission_status, customers.commission_status),
      commission_expires_at = coalesce(excluded.commission_expires_at, customers.commission_expires_at)`);
  return outcomes;
}
