import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * For the rest of this transaction, contact maintenance is noted, not done: the writes' contacts
 * go to contact_maintenance_backlog instead of having their activity, milestones and customer
 * totals recomputed at each statement (migration 0046). An import's batches call this.
 */
export async function deferContactMaintenance(db: Sql): Promise<void> {
  await db.execute(sql`select set_config('app.defer_contact_maintenance', 'on', true)`);
}

/** Brings up to `chunk` noted contacts of the account up to date; true while some may be left. */
export async function drainContactMaintenanceChunk(
  db: Sql,
  accountId: string,
  params: { chunk: number },
): Promise<boolean> {
  const [row] = await rows<{ more: boolean }>(
    db,
    sql`select ascribe_drain_contact_maintenance(${accountId}::uuid, ${params.chunk}::int) as more`,
  );
  return row?.more === true;
}

/** The accounts with noted contacts (an import stopped before its end); administration only. */
export async function contactMaintenanceAccounts(db: Sql): Promise<string[]> {
  const found = await rows<{ account: string }>(
    db,
    sql`select a::text as account from ascribe_contact_maintenance_accounts() as a`,
  );
  return found.map((r) => r.account);
}
