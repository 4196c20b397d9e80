import { z } from "zod";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { validationMessage } from "../http/pipeline.ts";
import { reResolveAds } from "../ingest/re-resolve-ads.ts";
import { foldReportRollup } from "../queries/fold-report-rollup.ts";
import { coerceCsvRecord } from "./csv-coerce.ts";
import { type BatchResult, type ImportKind, importKinds, isImportKind } from "./kinds.ts";
import { formatOf, readRecords } from "./read-records.ts";

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

/** Records per transaction, unless the kind sets its own. */
const BATCH = 500;

/**
 * Imports a file of one kind into an account, in batches of records per transaction (the kind's
 * `batchSize`, else 500). A bad line is reported with its number and skipped; the good ones land.
 * Within a batch, a record named twice keeps its last version (the earlier one counts as skipped).
 * While a batch is being written, the next one is read and validated: batches still commit one
 * after the other, in file order.
 */
export async function runImport(
  db: Database,
  secrets: SecretBox,
  input: z.input<typeof importInput>,
  onProgress: (progress: ImportProgress) => void = () => {},
  options: { batchSize?: number } = {},
): Promise<ImportSummary> {
  const { kind: name, account, file } = importInput.parse(input);
  if (!isImportKind(name)) throw new Error(`unknown kind ${name}`);
  const kind = importKinds[name] as ImportKind<unknown>;
  const batchSize = Math.max(1, options.batchSize ?? kind.batchSize ?? BATCH);
  const format = formatOf(file);
  const summary: ImportSummary = { imported: 0, updated: 0, skipped: 0, errors: [] };
  let lines = 0;
  let adsChanged = 0;
  let pending = new Map<string, unknown>();
  // The batch being written, if any; a failed write rejects here and stops the import.
  let writing: Promise<void> = Promise.resolve();

  const write = async (records: unknown[], linesRead: number) => {
    const result: BatchResult = await db.tenant(account, (tx) =>
      kind.write(tx, account, records, { secrets }),
    );
    summary.imported += result.imported;
    summary.updated += result.updated;
    summary.skipped += result.skipped;
    adsChanged += result.adsChanged ?? 0;
    onProgress({
      lines: linesRead,
      imported: summary.imported,
      updated: summary.updated,
      skipped: summary.skipped,
      errors: summary.errors.length,
    });
  };

  const flush = async () => {
    if (pending.size === 0) return;
    const records = [...pending.values()];
    pending = new Map();
    await writing;
    writing = write(records, lines);
    // Never left unhandled while the next batch is read; awaited (and rethrown) before the next write.
    writing.catch(() => {});
  };

  for await (const read of readRecords(file, format)) {
    lines = Math.max(lines, read.line);
    if ("error" in read) {
      summary.errors.push({ line: read.line, error: read.error });
      continue;
    }
    const candidate = format === "csv" ? coerceCsvRecord(kind.schema.shape, read.record) : read.record;
    const parsed = kind.schema.safeParse(candidate);
    if (!parsed.success) {
      summary.errors.push({ line: read.line, error: validationMessage(parsed.error) });
      continue;
    }
    const identity = kind.identity(parsed.data);
    if (pending.has(identity)) {
      pending.delete(identity);
      summary.skipped += 1;
    }
    pending.set(identity, parsed.data);
    if (pending.size >= batchSize) await flush();
  }
  await flush();
  await writing;
  // Once, after every batch: events and touchpoints stored earlier may name the new ads.
  if (adsChanged > 0) await db.tenant(account, (tx) => reResolveAds(tx, account));
  // Reports fold pending rollup deltas before reading: a large import pays it here, not a request.
  await db.tenant(account, (tx) => foldReportRollup(tx, account));
  await db.maintain({ afterBulkWrite: true }); // the embedded database's vacuum and statistics after the bulk write
  return summary;
}
