import type { Database, Sql } from "../db/client.ts";
import { drainContactMaintenanceChunk } from "../queries/contact-maintenance.ts";
import { foldReportRollupChunk } from "../queries/fold-report-rollup.ts";
import { isRetryable } from "./batch-runner.ts";

export interface FoldBacklogOptions {
  /** Rows of each log (for the drain, noted contacts) per call at first. */
  chunk?: number;
  /** The least a call folds: below it, a timeout is not the chunk's size. */
  minChunk?: number;
  /** One call (tests put a failing one in front of the real one). */
  step?: (tx: Sql, accountId: string, params: { chunk: number }) => Promise<boolean>;
}

/**
 * Folds a bulk load's backlog of rollup deltas (a demo seed, a large import) one chunk per
 * transaction, halving the chunk after a statement timeout or a lock wait. In one transaction, one
 * cancelled call lost the whole fold: a scale-100 demo seed left 3.5 million deltas and, on a machine
 * at load 5–6, a 25,000-row call outlasted the 15-s statement timeout, so `ascribe demo` failed at
 * its last step. Each committed chunk stays folded; the database function picks up where it left.
 */
export function foldBacklog(db: Database, accountId: string, options: FoldBacklogOptions = {}) {
  return inChunks(db, accountId, { chunk: 25_000, step: foldReportRollupChunk, ...options });
}

/**
 * Brings the contacts an import noted (migration 0046) up to date, in chunks as above. A chunk of
 * 2,000 contacts took about 200 ms on PostgreSQL in the import benchmark (bench/README, "Import").
 */
export function drainContactMaintenance(db: Database, accountId: string, options: FoldBacklogOptions = {}) {
  return inChunks(db, accountId, { chunk: 2_000, step: drainContactMaintenanceChunk, ...options });
}

async function inChunks(
  db: Database,
  accountId: string,
  options: FoldBacklogOptions & Required<Pick<FoldBacklogOptions, "chunk" | "step">>,
): Promise<void> {
  const step = options.step;
  const minChunk = options.minChunk ?? Math.min(1_000, options.chunk);
  let chunk = options.chunk;
  for (;;) {
    try {
      const size = chunk;
      if (!(await db.tenant(accountId, (tx) => step(tx, accountId, { chunk: size })))) return;
    } catch (err) {
      if (!isRetryable(err) || chunk <= minChunk) throw err;
      chunk = Math.max(minChunk, Math.floor(chunk / 2));
    }
  }
}
