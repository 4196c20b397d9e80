import type { Database, Sql } from "../db/client.ts";
import { foldReportRollupChunk } from "../queries/fold-report-rollup.ts";
import { isRetryable } from "./batch-runner.ts";

export interface FoldBacklogOptions {
  /** Rows of each log per call at first. */
  chunk?: number;
  /** The least a call folds: below it, a timeout is not the chunk's size. */
  minChunk?: number;
  /** One call (tests put a failing one in front of the real one). */
  step?: (tx: Sql, accountId: string, chunk: number) => Promise<boolean>;
}

/**
 * Folds a bulk load's backlog of rollup deltas (a demo seed, a large import) one chunk per
 * transaction, halving the chunk after a statement timeout or a lock wait. In one transaction, one
 * cancelled call lost the whole fold: a scale-100 demo seed left 3.5 million deltas and, on a machine
 * at load 5–6, a 25,000-row call outlasted the 15-s statement timeout, so `ascribe demo` failed at
 * its last step. Each committed chunk stays folded; the database function picks up where it left.
 */
export async function foldBacklog(
  db: Database,
  accountId: string,
  options: FoldBacklogOptions = {},
): Promise<void> {
  const step =
    options.step ??
    ((tx: Sql, account: string, chunk: number) => foldReportRollupChunk(tx, account, { chunk }));
  const minChunk = options.minChunk ?? 1_000;
  let chunk = options.chunk ?? 25_000;
  for (;;) {
    try {
      const size = chunk;
      if (!(await db.tenant(accountId, (tx) => step(tx, accountId, size)))) return;
    } catch (err) {
      if (!isRetryable(err) || chunk <= minChunk) throw err;
      chunk = Math.max(minChunk, Math.floor(chunk / 2));
    }
  }
}
