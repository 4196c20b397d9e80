import { type SQL, sql } from "drizzle-orm";
import { AccountRows } from "../db/account-rows.ts";
import { rows, type Sql, sessionSetting } from "../db/client.ts";
import { cursorRows } from "../db/cursor.ts";
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

/** The window, and a slice of its purchases: `limit` rows (all when absent) after the first `offset`. */
export interface PurchasesParams {
  window: ReportWindow;
  limit?: number;
  offset?: number;
}

/**
 * The account's purchases dated in the window, newest first, then by id (a total order: pages
 * partition the list). Each purchase keeps its contact fields as listed (migration 0041): no contact
 * is read per row.
 */
function purchasesQuery(accountId: string, params: PurchasesParams): SQL {
  const w = params.window;
  return sql`
    select
      p.account_id,
      p.id,
      ${isoMs(sql`p.purchase_date`)} as purchase_date,
      p.product_key,
      p.product_name,
      p.contact_email,
      p.contact_name,
      p.amount::float8 as amount,
      p.commissionable,
      p.commission_rate::float8 as commission_rate,
      p.commission_amount::float8 as commission_amount,
      p.invoice_id
    from purchases p
    where p.account_id = ${accountId}
      and p.purchase_date >= ${w.start}::timestamptz and p.purchase_date < ${w.end}::timestamptz
    order by p.purchase_date desc, p.id desc
    limit ${params.limit ?? null}::int offset ${params.offset ?? 0}::int`;
}

export async function contactsPurchases(db: Sql, accountId: string, params: PurchasesParams) {
  // A month of purchases is sorted in memory, not on disk.
  await sessionSetting(db, "work_mem", "32MB");
  return ownedRows(await rows<PurchaseRow>(db, purchasesQuery(accountId, params)));
}

/**
 * The same list, `batch` rows at a time from one cursor (inside the caller's transaction), each row
 * with its `account_id` for the streamed answer's barrier (AccountRows).
 */
export async function* contactsPurchasesBatches(
  db: Sql,
  accountId: string,
  params: PurchasesParams & { batch: number },
) {
  await sessionSetting(db, "work_mem", "32MB");
  for await (const found of cursorRows<PurchaseRow>(db, purchasesQuery(accountId, params), params.batch)) {
    yield new AccountRows(found);
  }
}
