import type { Metrics } from "../http/metrics.ts";
import type { ImportProgress, ImportSummary } from "./run-import.ts";

type Totals = Omit<ImportProgress, "lines">;

/**
 * Counts an import's rows as its batches commit: progress reports running totals, so each report
 * adds what moved since the previous one, and the summary adds what no report carried (bad lines
 * after the last batch). A long import thus shows on /metrics while it runs.
 */
export function importRowCounter(metrics: Metrics, kind: string) {
  const counted: Totals = { imported: 0, updated: 0, skipped: 0, errors: 0 };
  const add = (totals: Totals) => {
    metrics.importRows(kind, "imported", totals.imported - counted.imported);
    metrics.importRows(kind, "updated", totals.updated - counted.updated);
    metrics.importRows(kind, "skipped", totals.skipped - counted.skipped);
    metrics.importRows(kind, "error", totals.errors - counted.errors);
    Object.assign(counted, {
      imported: Math.max(counted.imported, totals.imported),
      updated: Math.max(counted.updated, totals.updated),
      skipped: Math.max(counted.skipped, totals.skipped),
      errors: Math.max(counted.errors, totals.errors),
    });
  };
  return {
    progress: (p: ImportProgress) => add(p),
    done: (summary: ImportSummary) => add({ ...summary, errors: summary.errors.length }),
  };
}
