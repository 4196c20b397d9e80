import type { Logger } from "pino";
import type { Database } from "../db/client.ts";
import { runPeriodically } from "../periodic.ts";
import { contactMaintenanceAccounts } from "../queries/contact-maintenance.ts";
import { drainContactMaintenance } from "./fold-backlog.ts";

/** How often `ascribe serve` looks for contacts an interrupted import left noted. */
export const CONTACT_MAINTENANCE_INTERVAL_MS = 60_000;

/**
 * Brings up to date the contacts that imports noted and did not reach their end to drain (a killed
 * `ascribe import`, a lost connection): every account with noted contacts, one after the other.
 * Returns the accounts drained.
 */
export async function catchUpContactMaintenance(db: Database): Promise<string[]> {
  const accounts = await db.admin(null, (tx) => contactMaintenanceAccounts(tx));
  for (const account of accounts) await drainContactMaintenance(db, account);
  return accounts;
}

export function scheduleContactMaintenance(db: Database, options: { intervalMs: number; logger: Logger }) {
  return runPeriodically(
    async () => {
      const accounts = await catchUpContactMaintenance(db);
      if (accounts.length > 0) options.logger.info({ accounts }, "noted contacts brought up to date");
    },
    { ...options, failure: "bringing noted contacts up to date failed" },
  );
}
