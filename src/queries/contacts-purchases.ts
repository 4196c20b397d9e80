import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import type { ReportWindow } from "../reports/window.ts";
import { isoMs } from "./sql-format.ts";

export interface PurchaseRow {
  account_id: string;
  id: string;
  purchase_date: string;
  product_key: string | null;
  product_name: string | null;
  contact_email: string | null;
  contact_name: string | null;
  amount: number;
  commissionable: boolean;
  commission_rate: number | null;
  commission_amount: number | null;
  invoice_id: string | null;
}

/** The account's purchases dated in the window, newest first. */
export async function contactsPurchases(db: Sql, accountId: string, params: { window: ReportWindow }) {
  const w = params.window;
  // For this transaction only (SET LOCAL): a month of purchases is sorted in memory, not on disk.
  await db.execute(sql`select set_config('work_mem', '32MB', true)`);
  return ownedRows(
    await rows<PurchaseRow>(
      db,
      sql`
      select
        p.account_id,
        p.id,
        ${isoMs(sql`p.purchase_date`)} as purchase_date,
        p.product_key,
        p.product_name,
        coalesce(c.email, p.contact_email) as contact_email,
        coalesce(p.contact_name, c.name) as contact_name,
        p.amount::float8 as amount,
        p.commissionable,
        p.commission_rate::float8 as commission_rate,
        p.commission_amount::float8 as commission_amount,
        p.invoice_id
      from purchases p
      -- Each purchase's contact by its key: reads only this window's contacts, where a hash join
      -- would scan every account's contacts.
      left join lateral (
        select c.email, c.name from contacts c
        where c.account_id = ${accountId} and c.id = p.contact_id
        limit 1
      ) c on true
      where p.account_id = ${accountId}
        and p.purchase_date >= ${w.start}::timestamptz and p.purchase_date < ${w.end}::timestamptz
      order by p.purchase_date desc, p.id desc`,
    ),
  );
}
