import type { Logger } from "pino";
import type { Database } from "../db/client.ts";
import { type AuditEntry, insertAuditEntries } from "../queries/insert-audit-entries.ts";

export interface AuditSink {
  record(accountId: string, entry: AuditEntry): void;
  /** Writes everything buffered; rejects (keeping the entries) if the database refuses. */
  flush(): Promise<void>;
  /** Final flush on shutdown: retries, and logs every entry it could not write. */
  close(): Promise<void>;
}

export interface AuditOptions {
  intervalMs?: number;
  maxBatch?: number;
  /** Entries written per transaction. */
  chunkSize?: number;
}

/**
 * Audit rows are written off the response's critical path, in batches. A failed write keeps the
 * entries for the next attempt: acknowledged requests are never dropped silently.
 */
export function createAuditWriter(db: Database, logger: Logger, options: AuditOptions = {}): AuditSink {
  const intervalMs = options.intervalMs ?? 250;
  const maxBatch = options.maxBatch ?? 1000;
  // PostgreSQL runs transactions side by side: larger chunks mean fewer transactions (each a begin,
  // a context and a commit, and a pooled connection the requests wait for). The embedded database
  // runs one at a time, so there a chunk stays short enough not to stall the requests behind it.
  const chunkSize = options.chunkSize ?? (db.kind === "postgres" ? 500 : 50);
  let pending: { accountId: string; entry: AuditEntry }[] = [];
  let inFlight: Promise<void> | null = null;

  async function writeOnce(): Promise<void> {
    if (pending.length === 0) return;
    const byAccount = new Map<string, AuditEntry[]>();
    for (const { accountId, entry } of pending) {
      const list = byAccount.get(accountId);
      if (list) list.push(entry);
      else byAccount.set(accountId, [entry]);
    }
    pending = [];
    const chunks: { accountId: string; entries: AuditEntry[] }[] = [];
    for (const [accountId, entries] of byAccount) {
      for (let i = 0; i < entries.length; i += chunkSize) {
        chunks.push({ accountId, entries: entries.slice(i, i + chunkSize) });
      }
    }
    let done = 0;
    try {
      // One transaction per account (RLS names one tenant at a time) and per chunk: the embedded
      // database runs one transaction at a time, and a long one would stall every request behind it.
      for (const { accountId, entries } of chunks) {
        // As the request role: audit writes are tenant writes, not administration.
        await db.tenant(accountId, (tx) => insertAuditEntries(tx, accountId, { entries }));
        done += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      const unwritten = chunks
        .slice(done)
        .flatMap((c) => c.entries.map((entry) => ({ accountId: c.accountId, entry })));
      pending = unwritten.concat(pending);
      throw err;
    }
  }

  function flush(): Promise<void> {
    // Serialize flushes so two never write the same entries; the chain itself never rejects.
    const run = (inFlight ?? Promise.resolve()).then(writeOnce);
    const settled = run.then(
      () => {},
      () => {},
    );
    inFlight = settled;
    void settled.then(() => {
      if (inFlight === settled) inFlight = null;
    });
    return run;
  }

  const timer = setInterval(() => {
    flush().catch((err: unknown) =>
      logger.error({ err, pending: pending.length }, "audit flush failed; entries kept for retry"),
    );
  }, intervalMs);
  timer.unref();

  return {
    record(accountId, entry) {
      pending.push({ accountId, entry });
      if (pending.length >= maxBatch) {
        flush().catch((err: unknown) =>
          logger.error({ err, pending: pending.length }, "audit flush failed; entries kept for retry"),
        );
      }
    },
    flush,
    async close() {
      clearInterval(timer);
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          await flush();
          if (pending.length === 0) return;
        } catch (err) {
          logger.error({ err, attempt }, "audit flush on shutdown failed");
        }
      }
      if (pending.length > 0) {
        logger.error({ unwritten: pending }, "audit entries could not be written before shutdown");
      }
    },
  };
}
