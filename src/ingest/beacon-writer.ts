import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import type { Database } from "../db/client.ts";
import { queryFailureOf } from "../db/query-error.ts";
import type { Beacon } from "./beacon.ts";
import { writeBeaconBatch } from "./beacon-batch.ts";

/** Stores a beacon; resolves once its transaction has committed, rejects if it was not written. */
export interface BeaconWriter {
  write(accountId: string, beacon: Beacon, receivedAt: Date): Promise<void>;
}

export interface BeaconWriterOptions {
  /** Transactions of one account in flight at once (PGlite runs one at a time anyway). */
  concurrency?: number;
  /** Most beacons in one transaction. */
  maxBatch?: number;
}

interface Queue {
  waiting: Pending[];
  /** Batches being written. */
  running: number;
  /** A pump is due at the end of this event loop turn. */
  scheduled: boolean;
}

interface Pending {
  beacon: Beacon;
  receivedAt: Date;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: a beacon that arrives while its account's transactions are busy waits for the next
 * one, and is written with every other beacon that arrived meanwhile, in one transaction of a few
 * set-based statements; each is answered after that commit. A beacon that finds the account idle is
 * written at once, so nothing waits for a timer. A beacon whose id the account already holds (a
 * resend, or a second copy in the same batch) resolves as the first copy did and writes nothing.
 *
 * A beacon is acknowledged only after a commit that holds it; when a batch fails, what happens
 * depends on who refused it:
 * - the database refused the batch's data (an error with a SQLSTATE of the data's: a value it
 *   cannot store, a constraint, a trigger raising at commit): the batch is split in two halves,
 *   written in arrival order, each one transaction, and so on down to single beacons. One bad beacon
 *   fails alone, the others are acknowledged after the commit of the half that holds them, and a
 *   batch of 200 with one bad beacon costs about 16 transactions, not 200;
 * - the connection or the server failed (the connection lost, even during COMMIT; a timeout; the
 *   server shutting down or out of resources): every beacon of the batch is refused at once,
 *   nothing is tried again, and none is acknowledged. Whether a COMMIT whose answer was lost took
 *   effect cannot be known; a beacon refused that way may be stored, and the tracking script's
 *   resend with the same id is then stored once (beacon_receipts).
 */
export function createBeaconWriter(
  db: Database,
  adIndexes: AdIndexCache,
  options: BeaconWriterOptions = {},
): BeaconWriter {
  const concurrency = options.concurrency ?? 1;
  const maxBatch = options.maxBatch ?? 200;
  const queues = new Map<string, Queue>();

  const commit = (accountId: string, batch: readonly Pending[]) =>
    db.tenant(accountId, (tx) => writeBeaconBatch(tx, accountId, batch, adIndexes));

  /** Writes `batch` and answers each of its beacons (see above). */
  const flush = async (accountId: string, batch: Pending[]): Promise<void> => {
    try {
      await commit(accountId, batch);
    } catch (err) {
      if (batch.length === 1 || !refusedByData(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await flush(accountId, batch.slice(0, half));
      await flush(accountId, batch.slice(half));
      return;
    }
    for (const p of batch) p.resolve();
  };

  const pump = (accountId: string) => {
    const queue = queues.get(accountId);
    if (!queue) return;
    queue.scheduled = false;
    while (queue.running < concurrency && queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, maxBatch);
      queue.running += 1;
      void flush(accountId, batch).finally(() => {
        queue.running -= 1;
        if (queue.running === 0 && queue.waiting.length === 0 && !queue.scheduled) queues.delete(accountId);
        else schedule(accountId, queue);
      });
    }
  };

  /*
   * A batch starts at the end of the event loop turn, not at once: PGlite runs a whole transaction
   * without yielding to I/O, so a batch started from the first request's handler would hold only
   * that request while the others of the same turn are still unread on their sockets. Deferred with
   * setImmediate, it takes every beacon whose request was read in that turn.
   */
  const schedule = (accountId: string, queue: Queue) => {
    if (queue.scheduled) return;
    queue.scheduled = true;
    setImmediate(pump, accountId);
  };

  return {
    write(accountId, beacon, receivedAt) {
      return new Promise<void>((resolve, reject) => {
        let queue = queues.get(accountId);
        if (!queue) {
          queue = { waiting: [], running: 0, scheduled: false };
          queues.set(accountId, queue);
        }
        queue.waiting.push({ beacon, receivedAt, resolve, reject });
        schedule(accountId, queue);
      });
    },
  };
}

/*
 * SQLSTATE classes of a failure that is not the data's: connection exception (08), insufficient
 * resources (53), operator intervention but a statement's own timeout (57P01 admin shutdown, 57P03
 * cannot connect now…), system error (58), internal error (XX). A failure without a SQLSTATE (the
 * connection closed, node-postgres's own timeouts) is not the data's either.
 */
const NOT_THE_DATA = /^(08|53|57P|58|XX)/;

/** The database answered the batch with an error about what it was asked to store. */
function refusedByData(err: unknown): boolean {
  const code = queryFailureOf(err)?.code;
  return typeof code === "string" && !NOT_THE_DATA.test(code);
}
