import { performance } from "node:perf_hooks";
import { z } from "zod";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database, Sql } from "../db/client.ts";
import { validationMessage } from "../http/pipeline.ts";
import { reResolveAds } from "../ingest/re-resolve-ads.ts";
import { deferContactMaintenance } from "../queries/contact-maintenance.ts";
import { refreshStoredDays } from "../reports/attribution-day-credit.ts";
import {
  BatchSizer,
  DEFAULT_RETRY,
  type Numbered,
  type RetryOptions,
  writeWithRetry,
  yieldToRequests,
} from "./batch-runner.ts";
import { coerceCsvRecord } from "./csv-coerce.ts";
import { drainContactMaintenance, foldBacklog } from "./fold-backlog.ts";
import { ImportLanes } from "./import-lanes.ts";
import { type ImportKind, importKinds, isImportKind } from "./kinds.ts";
import { plannerStatistics } from "./planner-statistics.ts";
import { formatOf, type ImportFormat, readRecords } from "./read-records.ts";

export const importInput = z.object({
  kind: z.string().refine(isImportKind, {
    error: (issue) =>
      `unknown kind ${String(issue.input)} (supported: ${Object.keys(importKinds).join(", ")})`,
  }),
  account: z.uuid(),
  file: z.string().min(1),
});

export interface ImportSummary {
  imported: number;
  updated: number;
  skipped: number;
  errors: { line: number; error: string }[];
}

export interface ImportProgress {
  lines: number;
  imported: number;
  updated: number;
  skipped: number;
  errors: number;
}

/**
 * Wall time a batch aims at (see batch-runner.ts). The embedded database runs one transaction at a
 * time, so a request waits for the batch in progress: 100 ms a batch, measured with
 * bench/import-live.ts (a batch of events has fixed costs, about 40 ms on a loaded machine, so a
 * smaller target leaves batches of a few records and the import crawls). PostgreSQL reads run beside
 * the import; its bound is the statement timeout, which a batch of a second stays far from.
 */
const TARGET_MS = { embedded: 100, postgres: 1_000 } as const;

/**
 * Records per transaction at most, unless the kind sets its own; the first batch's size; the least
 * (a batch has fixed costs, such as reading the account's ads, that a smaller one would not repay).
 */
const MAX_BATCH = 500;
const FIRST_BATCH = 50;
const MIN_BATCH = 50;

/**
 * Batches written at once on PostgreSQL, for kinds that name what two of them must not share
 * (import-lanes.ts): two, so that the database works on one while the process prepares the other.
 * The embedded database runs one transaction at a time: one lane.
 */
const POSTGRES_LANES = 2;

export interface ImportOptions {
  /** A fixed number of records per batch instead of sizing batches by their time. */
  batchSize?: number;
  retry?: Partial<RetryOptions>;
  /** Runs in each batch's transaction after its records are written (a seam for tests). */
  beforeCommit?: (tx: Sql) => Promise<void>;
  /** Batches written at once (import-lanes.ts); default two on PostgreSQL for kinds that allow it, else one. */
  lanes?: number;
}

/**
 * Imports a file of one kind into an account, in batches of records per transaction, each sized to
 * take about TARGET_MS (at most the kind's `batchSize`, else 500), the event loop given back to
 * requests between batches. A bad line is reported with its number and skipped; the good ones
 * land. A batch that failed on a timeout or a lock is written again in halves (batch-runner.ts).
 * Within a batch, a record named twice keeps its last version (the earlier one counts as skipped).
 * While a batch is being written, the next one is read and validated. On PostgreSQL, a kind that
 * names its records' conflict keys (events: the contact) has two batches written at once, one
 * contact's records always in file order (import-lanes.ts); otherwise batches commit one after the
 * other, in file order. `onProgress` hears after every batch.
 */
export async function runImport(
  db: Database,
  secrets: SecretBox,
  input: z.input<typeof importInput>,
  onProgress: (progress: ImportProgress) => void = () => {},
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const { kind: name, account, file } = importInput.parse(input);
  if (!isImportKind(name)) throw new Error(`unknown kind ${name}`);
  const kind = importKinds[name] as ImportKind<unknown>;
  const max = kind.batchSize ?? MAX_BATCH;
  const sizer = new BatchSizer(
    options.batchSize !== undefined
      ? { fixed: options.batchSize }
      : {
          targetMs: TARGET_MS[db.kind],
          initial: Math.min(FIRST_BATCH, max),
          min: Math.min(MIN_BATCH, max),
          max,
        },
  );
  const retry = { ...DEFAULT_RETRY, ...options.retry, onRetry: (size: number) => sizer.failed(size) };
  const format = formatOf(file);
  const summary: ImportSummary = { imported: 0, updated: 0, skipped: 0, errors: [] };
  let lines = 0;
  let reportedLines = 0;
  let adsChanged = 0;
  const statistics = plannerStatistics(db);

  const write = async (batch: Numbered<unknown>[], linesRead: number) => {
    // Time spent inside the batch's transactions: waiting for the embedded database's lock behind
    // requests is not the batch's cost, and counting it would shrink batches as reads grow.
    let workMs = 0;
    const writeOnce = (records: unknown[]) =>
      db.tenant(account, async (tx) => {
        const started = performance.now();
        try {
          // Activity, milestones and customer totals: once per import, in finish(), not per batch.
          await deferContactMaintenance(tx);
          const result = await kind.write(tx, account, records, { secrets });
          await options.beforeCommit?.(tx);
          return result;
        } finally {
          workMs += performance.now() - started;
        }
      });
    const { result, errors } = await writeWithRetry(batch, writeOnce, retry);
    if (errors.length === 0) sizer.observe(batch.length, workMs);
    summary.imported += result.imported;
    summary.updated += result.updated;
    summary.skipped += result.skipped;
    summary.errors.push(...errors);
    adsChanged += result.adsChanged ?? 0;
    // Lanes finish out of file order: the lines read so far only grow. Told before anything is
    // awaited, so that the counts are this batch's and the ones before it, never a later one's.
    reportedLines = Math.max(reportedLines, linesRead);
    onProgress({
      lines: reportedLines,
      imported: summary.imported,
      updated: summary.updated,
      skipped: summary.skipped,
      errors: summary.errors.length,
    });
    await statistics.written(result.imported + result.updated);
    await yieldToRequests();
  };
  // Not `?? []`: a record's null keys (it conflicts with everything) must reach the lanes as null.
  const conflictKeys = kind.conflictKeys?.bind(kind);
  const laneCount = conflictKeys && db.kind === "postgres" ? (options.lanes ?? POSTGRES_LANES) : 1;
  const lanes = new ImportLanes<unknown>(laneCount, {
    identity: (record) => kind.identity(record),
    keys: conflictKeys ?? (() => []),
    write: (batch) => write(batch, lines),
    onReplaced: () => {
      summary.skipped += 1;
    },
  });

  for await (const read of readRecords(file, format)) {
    lines = Math.max(lines, read.line);
    if ("error" in read) {
      summary.errors.push({ line: read.line, error: read.error });
      continue;
    }
    const parsed = validate(kind, format, read.record);
    if ("error" in parsed) {
      summary.errors.push({ line: read.line, error: parsed.error });
      continue;
    }
    await lanes.add({ line: read.line, record: parsed.record }, sizer.next());
  }
  await lanes.drain();
  // Errors of retried batches arrive after later lines' validation errors.
  summary.errors.sort((a, b) => a.line - b.line);
  await finish(db, account, adsChanged > 0);
  return summary;
}

function validate(
  kind: ImportKind<unknown>,
  format: ImportFormat,
  record: Record<string, unknown>,
): { record: unknown } | { error: string } {
  const candidate = format === "csv" ? coerceCsvRecord(kind.schema.shape, record) : record;
  const parsed = kind.schema.safeParse(candidate);
  return parsed.success ? { record: parsed.data } : { error: validationMessage(parsed.error) };
}

/** What an import does once, after its last batch. */
async function finish(db: Database, account: string, adsChanged: boolean): Promise<void> {
  // Events and touchpoints stored earlier may name the new ads.
  if (adsChanged) await db.tenant(account, (tx) => reResolveAds(tx, account));
  // Each contact the batches noted, brought up to date once (migration 0046); and the pending rollup
  // deltas folded, which reports do before reading: a large import pays it here, not a request. The
  // two write different tables: on PostgreSQL each has its own connection and core.
  const done = await Promise.allSettled([drainContactMaintenance(db, account), foldBacklog(db, account)]);
  for (const d of done) if (d.status === "rejected") throw d.reason;
  // Likewise the attribution models' stored days the import staled.
  await db.tenant(account, (tx) => refreshStoredDays(tx, account));
  await db.maintain({ afterBulkWrite: true }); // the embedded database's vacuum and statistics after the bulk write
}
