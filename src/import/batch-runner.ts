import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { withoutBoundValues } from "../db/query-error.ts";
import { BatchCost } from "./batch-cost.ts";
import type { BatchResult } from "./kinds.ts";

/*
 * How an import's records reach the database while the API keeps answering: batches sized by how
 * long they take (not by a fixed count), the event loop given back after each one, and a batch that
 * failed on a timeout or a lock written again in halves. How one batch is written (one statement per
 * record, or set-based) is the caller's `write`; only the batching is here.
 */

/** A record with the line of the file it came from, so that a failure names the line. */
export interface Numbered<R> {
  line: number;
  record: R;
}

export interface LineError {
  line: number;
  error: string;
}

/** How big the next batch is: aimed at `targetMs` per batch, from the time the last ones took. */
export interface SizingOptions {
  /** Wall time a batch should take. On the embedded database, the most a request waits for one. */
  targetMs: number;
  /** Records in the first batch, before anything is known of their cost. */
  initial: number;
  /** The least a batch holds when it is not failing: below it, per-batch costs dominate. */
  min: number;
  max: number;
}

/**
 * A batch's per-record part is kept at least this many times its fixed part: when the fixed part
 * alone (statement triggers, planning) nears the target, batches sized by the target alone stay at
 * the least and the import spends most of its time on fixed costs (measured on the embedded
 * database: 50-record batches at ~500 ms each, 4 s of CPU per 1,000 events instead of ~1 s).
 */
const PER_RECORD_OVER_FIXED = 2;

/**
 * Adaptive batch size. A batch's time per record predicts the next one's: the next batch is what
 * fits in `targetMs` at that rate, at most twice the last (one unusually fast batch must not make
 * the next one take ten times the target) and at least `min`; but never so small that the batch's
 * fixed cost (fitted over the recent batches, batch-cost.ts) is more than a third of its time, so
 * a target below the fixed cost is exceeded rather than paid for with the import's throughput.
 * After a timeout, half the failed batch, down to 1. `fixed` disables it.
 */
export class BatchSizer {
  private size: number;
  private readonly cost = new BatchCost();

  constructor(private readonly options: SizingOptions | { fixed: number }) {
    this.size =
      "fixed" in options ? Math.max(1, options.fixed) : clamp(options.initial, options.min, options.max);
  }

  next(): number {
    return this.size;
  }

  /** A batch of `records` committed in `ms`. */
  observe(records: number, ms: number): void {
    if ("fixed" in this.options || records < 1) return;
    this.cost.add(records, ms);
    let wanted = Math.floor((records * this.options.targetMs) / Math.max(ms, 1));
    const cost = this.cost.estimate();
    if (cost) {
      wanted = Math.max(wanted, Math.round((PER_RECORD_OVER_FIXED * cost.fixedMs) / cost.perRecordMs));
    } else if (wanted < records && records <= this.options.min) {
      // Over the target at the least size, and the recent batches' sizes too alike to tell the
      // fixed part from the rest: a batch of another size does.
      wanted = records * 2;
    }
    this.size = clamp(Math.min(wanted, records * 2), this.options.min, this.options.max);
  }

  /** A batch of `records` failed on a timeout: the next ones are half its size. */
  failed(records: number): void {
    if ("fixed" in this.options) return;
    this.size = clamp(Math.floor(records / 2), 1, this.options.max);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * SQLSTATEs of a statement that may succeed when run again, smaller or later: a statement timeout
 * (query_canceled), a lock wait timeout (lock_not_available), a serialization failure, a deadlock.
 */
const RETRYABLE_CODES = new Set(["57014", "55P03", "40001", "40P01"]);

/** node-postgres's own timeouts (query_timeout, the pool's connection wait) carry no SQLSTATE. */
const RETRYABLE_MESSAGES = /^(Query read timeout|timeout exceeded when trying to connect)/;

/** The errors a batch is written again after; anything else stops the import, as before. */
export function isRetryable(err: unknown): boolean {
  return causes(err).some(
    (e) => RETRYABLE_CODES.has(String(e.code)) || RETRYABLE_MESSAGES.test(String(e.message)),
  );
}

/** The innermost error's message: the database's words, never the statement and its values. */
export function reasonOf(err: unknown): string {
  const chain = causes(err);
  const inner = chain[chain.length - 1];
  return inner ? String(inner.message) : String(err);
}

function causes(err: unknown): { code?: unknown; message?: unknown }[] {
  const chain: { code?: unknown; message?: unknown; cause?: unknown }[] = [];
  let current: unknown = err;
  while (current && typeof current === "object" && chain.length < 10) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown };
    chain.push(e);
    current = e.cause;
  }
  return chain;
}

export interface RetryOptions {
  /** How many times a record is tried before its line is reported; 1 turns retries off. */
  attempts: number;
  /** The wait before the first retry, doubled for each later one. */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, backoffMs: 200 };

/**
 * Writes one batch (`write` is one transaction: all of it lands or none). On a retryable failure
 * the batch is written again as two halves, each on its own, after a backoff; a half that fails
 * again is halved again, down to single records tried `attempts` times in all. What still fails is
 * reported line by line; the rest lands. Nothing lands twice: a failed transaction left nothing,
 * and a replay of a record that did commit (a timeout on COMMIT) is a no-op by its identity.
 */
export async function writeWithRetry<R>(
  batch: readonly Numbered<R>[],
  write: (records: R[]) => Promise<BatchResult>,
  options: RetryOptions & { onRetry?: (size: number, err: unknown) => void } = DEFAULT_RETRY,
): Promise<{ result: BatchResult; errors: LineError[] }> {
  const result: BatchResult = { imported: 0, updated: 0, skipped: 0, adsChanged: 0 };
  const errors: LineError[] = [];
  const attempt = async (part: readonly Numbered<R>[], tried: number): Promise<void> => {
    try {
      const written = await write(part.map((p) => p.record));
      result.imported += written.imported;
      result.updated += written.updated;
      result.skipped += written.skipped;
      result.adsChanged = (result.adsChanged ?? 0) + (written.adsChanged ?? 0);
    } catch (err) {
      // Not a line's fault: the import stops, told in one line without the batch's values.
      if (!isRetryable(err)) throw withoutBoundValues(err);
      if (tried + 1 >= options.attempts) {
        const error = `not imported after ${tried + 1} attempts: ${reasonOf(err)}`;
        for (const p of part) errors.push({ line: p.line, error });
        return;
      }
      options.onRetry?.(part.length, err);
      await sleep(options.backoffMs * 2 ** tried);
      if (part.length === 1) return attempt(part, tried + 1);
      const half = Math.ceil(part.length / 2);
      await attempt(part.slice(0, half), tried + 1);
      await attempt(part.slice(half), tried + 1);
    }
  };
  await attempt(batch, 0);
  errors.sort((a, b) => a.line - b.line);
  return { result, errors };
}

/**
 * Gives the event loop a turn: requests that arrived while a batch was written are read and take
 * their place in the embedded database's queue before the next batch does.
 */
export function yieldToRequests(): Promise<void> {
  return nextTurn();
}
