import { queryFailureOf } from "../db/query-error.ts";

/** Submits an item of an account; resolves with its result once its transaction has committed. */
export interface GroupCommit<Item, Result> {
  submit(accountId: string, item: Item): Promise<Result>;
}

export interface GroupCommitOptions<Item = unknown> {
  /** Transactions of one account in flight at once (PGlite runs one at a time anyway). */
  concurrency?: number;
  /** Most items in one transaction. */
  maxBatch?: number;
  /**
   * A failure caused by the batch's items rather than the connection or the server: the batch is
   * split to find the item(s) at fault. Default: the database refused what it was asked to store.
   */
  refusedByItems?: (err: unknown) => boolean;
  /**
   * What an item writes that another transaction of its account may write too (a visitor, a
   * contact): two items sharing a key are never in two batches in flight at once, and are written in
   * arrival order. Without it, `concurrency` above 1 lets any two batches overlap; with `concurrency` 1
   * it is not asked.
   */
  keysOf?: (item: Item) => readonly string[];
  /**
   * A failure that says nothing about the items: the batch lost a race with another transaction
   * (deadlock, serialization failure) and is written again as a whole, up to `attempts` times in all.
   * Default: SQLSTATE 40P01 or 40001.
   */
  lostRace?: (err: unknown) => boolean;
  /** Attempts of a batch that lost a race (default 3). */
  attempts?: number;
}

interface Pending<Item, Result> {
  item: Item;
  keys: readonly string[];
  resolve(result: Result): void;
  reject(error: unknown): void;
}

interface Queue<Item, Result> {
  waiting: Pending<Item, Result>[];
  /** Batches being written. */
  running: number;
  /** Keys of the items of the batches being written, with how many items hold each. */
  busy: Map<string, number>;
  /** A pump is due at the end of this event loop turn. */
  scheduled: boolean;
}

/**
 * Group commit: an item that arrives while its account's transactions are busy waits for the next
 * one, and is written with every other item that arrived meanwhile by one `commit` (one
 * transaction of a few set-based statements, whose per-statement costs — maintenance triggers,
 * planning, the commit's flush — are paid once for the batch); each is answered after that commit
 * with its own result. An item that finds the account idle is written at once, so nothing waits
 * for a timer.
 *
 * An item is acknowledged only after a commit that holds it; when a batch fails, what happens
 * depends on who refused it:
 * - the items (`refusedByItems`; by default an error with a SQLSTATE of the data's: a value the
 *   database cannot store, a constraint, a trigger raising at commit): the batch is split in two
 *   halves, written in arrival order, each one transaction, and so on down to single items. One bad
 *   item fails alone, the others are acknowledged after the commit of the half that holds them, and
 *   a batch of 200 with one bad item costs about 16 transactions, not 200;
 * - a race lost to another transaction of the account (`lostRace`: a deadlock, a serialization
 *   failure): the whole batch is written again, up to `attempts` times in all, then refused as a
 *   whole as below;
 * - the connection or the server (the connection lost, even during COMMIT; a timeout; the server
 *   shutting down or out of resources): every item of the batch is refused at once, nothing is
 *   tried again, and none is acknowledged. Whether a COMMIT whose answer was lost took effect
 *   cannot be known: the items' own idempotence (beacon ids, vendor delivery ids) makes the
 *   sender's retry land once.
 */
export function createGroupCommit<Item, Result>(
  commit: (accountId: string, items: readonly Item[]) => Promise<readonly Result[]>,
  options: GroupCommitOptions<Item> = {},
): GroupCommit<Item, Result> {
  const concurrency = options.concurrency ?? 1;
  const maxBatch = options.maxBatch ?? 200;
  const refusedByItems = options.refusedByItems ?? refusedByData;
  const lostRace = options.lostRace ?? lostRaceWithAnother;
  const attempts = options.attempts ?? 3;
  // With one batch in flight no two can share a key: the keys are neither computed nor tracked.
  const keysOf = concurrency > 1 ? options.keysOf : undefined;
  const queues = new Map<string, Queue<Item, Result>>();

  /** Writes `batch` and answers each of its items (see above). */
  const flush = async (accountId: string, batch: Pending<Item, Result>[], attempt = 1): Promise<void> => {
    let results: readonly Result[];
    try {
      results = await commit(
        accountId,
        batch.map((p) => p.item),
      );
    } catch (err) {
      // Checked first: a deadlock's SQLSTATE is not one of the connection's, yet no item is at fault.
      if (lostRace(err) && attempt < attempts) return flush(accountId, batch, attempt + 1);
      if (batch.length === 1 || lostRace(err) || !refusedByItems(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await flush(accountId, batch.slice(0, half));
      await flush(accountId, batch.slice(half));
      return;
    }
    for (const [i, p] of batch.entries()) p.resolve(results[i] as Result);
  };

  const pump = (accountId: string) => {
    const queue = queues.get(accountId);
    if (!queue) return;
    queue.scheduled = false;
    while (queue.running < concurrency && queue.waiting.length > 0) {
      const batch = take(queue);
      if (batch.length === 0) break;
      queue.running += 1;
      void flush(accountId, batch).finally(() => {
        for (const p of batch) for (const key of p.keys) release(queue.busy, key);
        queue.running -= 1;
        if (queue.running === 0 && queue.waiting.length === 0 && !queue.scheduled) queues.delete(accountId);
        else schedule(accountId, queue);
      });
    }
  };

  /**
   * The next batch: waiting items in arrival order, up to `maxBatch`, but none sharing a key with a
   * batch in flight. An item left waiting holds its keys back for the items after it, so that a
   * visitor's beacons are still written in arrival order.
   */
  const take = (queue: Queue<Item, Result>): Pending<Item, Result>[] => {
    if (!keysOf) return queue.waiting.splice(0, maxBatch);
    const batch: Pending<Item, Result>[] = [];
    const left: Pending<Item, Result>[] = [];
    const held = new Set(queue.busy.keys());
    for (const p of queue.waiting) {
      if (batch.length < maxBatch && !p.keys.some((key) => held.has(key))) batch.push(p);
      else {
        left.push(p);
        for (const key of p.keys) held.add(key);
      }
    }
    queue.waiting = left;
    for (const p of batch) for (const key of p.keys) queue.busy.set(key, (queue.busy.get(key) ?? 0) + 1);
    return batch;
  };

  /*
   * A batch starts at the end of the event loop turn, not at once: PGlite runs a whole transaction
   * without yielding to I/O, so a batch started from the first request's handler would hold only
   * that request while the others of the same turn are still unread on their sockets. Deferred with
   * setImmediate, it takes every item whose request was read in that turn.
   */
  const schedule = (accountId: string, queue: Queue<Item, Result>) => {
    if (queue.scheduled) return;
    queue.scheduled = true;
    setImmediate(pump, accountId);
  };

  return {
    submit(accountId, item) {
      return new Promise<Result>((resolve, reject) => {
        let queue = queues.get(accountId);
        if (!queue) {
          queue = { waiting: [], running: 0, busy: new Map(), scheduled: false };
          queues.set(accountId, queue);
        }
        queue.waiting.push({ item, keys: keysOf?.(item) ?? [], resolve, reject });
        schedule(accountId, queue);
      });
    },
  };
}

function release(busy: Map<string, number>, key: string): void {
  const n = (busy.get(key) ?? 0) - 1;
  if (n > 0) busy.set(key, n);
  else busy.delete(key);
}

/** A deadlock (40P01) or a serialization failure (40001): the transaction lost a race, not its data. */
export function lostRaceWithAnother(err: unknown): boolean {
  const code = queryFailureOf(err)?.code;
  return code === "40P01" || code === "40001";
}

/*
 * SQLSTATE classes of a failure that is not the data's: connection exception (08), insufficient
 * resources (53), operator intervention but a statement's own timeout (57P01 admin shutdown, 57P03
 * cannot connect now…), system error (58), internal error (XX). A failure without a SQLSTATE (the
 * connection closed, node-postgres's own timeouts) is not the data's either.
 */
const NOT_THE_DATA = /^(08|53|57P|58|XX)/;

/** The database answered the batch with an error about what it was asked to store. */
export function refusedByData(err: unknown): boolean {
  const code = queryFailureOf(err)?.code;
  return typeof code === "string" && !NOT_THE_DATA.test(code);
}
