import type { Numbered } from "./batch-runner.ts";

/** A record waiting in a lane or being written there, with the keys it holds. */
interface Held<R> extends Numbered<R> {
  /** Null: it conflicts with every other record (it recounts the whole account). */
  keys: readonly string[] | null;
}

interface Lane<R> {
  pending: Map<string, Held<R>>;
  /** The batch being written, if any; a failed write rejects here and stops the import. */
  writing: Promise<void>;
  /** Records handed to `write` and not yet finished. */
  inFlight: number;
  /** Records held here that conflict with every other. */
  exclusive: number;
}

/**
 * An import's batches written side by side, one transaction per lane (on PostgreSQL, a connection
 * each), so that the database works on one batch while the process prepares another: a single
 * lane left a core idle, the process and the database taking turns (docs/operations.md, "Imports
 * on a live service").
 *
 * What keeps it correct is the keys: a record goes to the lane that holds one of its keys (its
 * identity, its contact) in a batch pending or being written, so one contact's records are written
 * in file order by one transaction after another, never by two at once, and the per-contact
 * maintenance of the database (milestones, activity, totals, sale counting) always sees a contact's
 * events whole. A record whose keys two lanes hold waits until both are written; a record that
 * conflicts with every other (`keys` null) waits until it is alone. Records of disjoint keys may
 * commit in another order than the file's: nothing they write is shared.
 *
 * Within a lane, a record named twice before its batch is written keeps its last version
 * (`onReplaced` counts the earlier one).
 */
export class ImportLanes<R> {
  private readonly lanes: Lane<R>[];
  private readonly holders = new Map<string, { lane: number; count: number }>();
  /** The lane new records go to when no key ties them to one: filled one at a time. */
  private filling = 0;

  constructor(
    count: number,
    private readonly options: {
      identity: (record: R) => string;
      /** What two batches written at once must not share, besides the identity; null: everything. */
      keys: (record: R) => readonly string[] | null;
      /** Writes one batch (resolves once committed; rejects to stop the import). */
      write: (batch: Numbered<R>[]) => Promise<void>;
      onReplaced: () => void;
    },
  ) {
    this.lanes = Array.from({ length: Math.max(1, count) }, () => ({
      pending: new Map(),
      writing: Promise.resolve(),
      inFlight: 0,
      exclusive: 0,
    }));
  }

  /** Places a record; a lane that reaches `batchSize` records is written (after its previous batch). */
  async add(item: Numbered<R>, batchSize: number): Promise<void> {
    const identity = this.options.identity(item.record);
    const keys = this.keysOf(identity, item.record);
    let index = this.place(keys);
    if (index === null) {
      await this.drain();
      index = this.filling;
    }
    const lane = this.lanes[index] as Lane<R>;
    const replaced = lane.pending.get(identity);
    if (replaced) {
      lane.pending.delete(identity);
      this.release(index, [replaced]);
      this.options.onReplaced();
    }
    lane.pending.set(identity, { line: item.line, record: item.record, keys });
    if (keys === null) lane.exclusive += 1;
    else {
      for (const key of keys) {
        const holder = this.holders.get(key);
        if (holder) holder.count += 1;
        else this.holders.set(key, { lane: index, count: 1 });
      }
    }
    if (lane.pending.size >= batchSize) {
      if (index === this.filling) this.filling = (index + 1) % this.lanes.length;
      await this.flush(index);
    }
  }

  /** Writes what every lane still holds and waits for all of it. */
  async drain(): Promise<void> {
    for (let i = 0; i < this.lanes.length; i++) await this.flush(i);
    await this.whenSettled(Promise.all(this.lanes.map((lane) => lane.writing)));
  }

  /**
   * `step`, and on its failure every lane's write settled before the failure is rethrown: the
   * import stops with nothing of it still being written behind the caller's back.
   */
  private async whenSettled<T>(step: Promise<T>): Promise<T> {
    try {
      return await step;
    } catch (err) {
      await Promise.allSettled(this.lanes.map((lane) => lane.writing));
      throw err;
    }
  }

  /** Its identity and the kind's keys; one lane has nothing to keep apart. */
  private keysOf(identity: string, record: R): readonly string[] | null {
    if (this.lanes.length === 1) return [];
    const own = this.options.keys(record);
    return own === null ? null : [`id:${identity}`, ...own];
  }

  /** The lane a record with `keys` may join now, or null when it must wait for the lanes to empty. */
  private place(keys: readonly string[] | null): number | null {
    // Every lane the record is tied to must be the same one (a loop, not a closure: once per record).
    let tied = -1;
    for (let i = 0; i < this.lanes.length; i++) {
      const lane = this.lanes[i] as Lane<R>;
      const holds = keys === null ? lane.pending.size > 0 || lane.inFlight > 0 : lane.exclusive > 0;
      if (!holds) continue;
      if (tied !== -1 && tied !== i) return null;
      tied = i;
    }
    if (keys !== null) {
      for (const key of keys) {
        const holder = this.holders.get(key);
        if (!holder) continue;
        if (tied !== -1 && tied !== holder.lane) return null;
        tied = holder.lane;
      }
    }
    return tied === -1 ? this.filling : tied;
  }

  private async flush(index: number): Promise<void> {
    const lane = this.lanes[index] as Lane<R>;
    if (lane.pending.size === 0) return;
    const batch = [...lane.pending.values()];
    lane.pending = new Map();
    lane.inFlight += batch.length;
    try {
      // One batch at a time per lane; an earlier failure stops the import here.
      await this.whenSettled(lane.writing);
    } catch (err) {
      lane.inFlight -= batch.length;
      throw err;
    }
    const written = this.options.write(batch).finally(() => {
      lane.inFlight -= batch.length;
      this.release(index, batch);
    });
    // Never left unhandled while later records are read; awaited (and rethrown) before the next write.
    written.catch(() => {});
    lane.writing = written;
  }

  private release(index: number, held: readonly Held<R>[]): void {
    const lane = this.lanes[index] as Lane<R>;
    for (const h of held) {
      if (h.keys === null) {
        lane.exclusive -= 1;
        continue;
      }
      for (const key of h.keys) {
        const holder = this.holders.get(key);
        if (!holder) continue;
        holder.count -= 1;
        if (holder.count === 0) this.holders.delete(key);
      }
    }
  }
}
