import type { Logger } from "pino";
import { runPeriodically } from "../periodic.ts";
import { spendConnectors } from "../queries/spend-connectors.ts";
import { type SpendSyncDeps, syncSpend } from "./spend-sync.ts";

/**
 * Syncs every account's Meta and Google connectors every `intervalMs` inside `ascribe serve` (0:
 * never; SPEND_SYNC_INTERVAL_SECONDS), one after the other, each over the default window. A failed
 * sync is logged and recorded on its connector (last_error); the others and the server go on.
 */
export function scheduleSpendSync(deps: SpendSyncDeps, options: { intervalMs: number; logger: Logger }) {
  let stopped = false;
  const runAll = async () => {
    const connectors = await deps.db.admin(null, (tx) => spendConnectors(tx));
    for (const c of connectors) {
      if (stopped) return;
      try {
        const r = await syncSpend(deps, { account: c.accountId, platform: c.kind, connector: c.id });
        options.logger.info(
          { account: c.accountId, connector: c.id, rows: r.rows_written },
          "ad spend synced",
        );
      } catch (err) {
        options.logger.error({ err, account: c.accountId, connector: c.id }, "ad spend sync failed");
      }
    }
  };
  const periodic = runPeriodically(runAll, { ...options, failure: "ad spend sync failed" });
  return {
    // A stop between two connectors' syncs does not wait for the rest of the accounts.
    stop() {
      stopped = true;
      return periodic.stop();
    },
  };
}
