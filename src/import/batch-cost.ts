/*
 * What a batch costs as a function of its size: a fixed part (statement triggers that run once per
 * statement, planning, reading the account's ads) plus a part per record. Fitted by least squares
 * on the recent batches, older ones weighing less (a table that grows changes both parts).
 */

/** How much an observation's weight shrinks with each newer one. */
const DECAY = 0.85;

export interface Cost {
  fixedMs: number;
  perRecordMs: number;
}

export class BatchCost {
  private w = 0;
  private n = 0;
  private t = 0;
  private nn = 0;
  private nt = 0;

  add(records: number, ms: number): void {
    this.w = this.w * DECAY + 1;
    this.n = this.n * DECAY + records;
    this.t = this.t * DECAY + ms;
    this.nn = this.nn * DECAY + records * records;
    this.nt = this.nt * DECAY + records * ms;
  }

  /** The fitted line, or null while the sizes barely differ or time does not grow with size. */
  estimate(): Cost | null {
    if (this.w === 0) return null;
    const meanN = this.n / this.w;
    const meanT = this.t / this.w;
    const varN = this.nn / this.w - meanN * meanN;
    if (varN <= (0.05 * meanN) ** 2) return null;
    const perRecordMs = (this.nt / this.w - meanN * meanT) / varN;
    if (!(perRecordMs > 0)) return null;
    return { fixedMs: Math.max(0, meanT - perRecordMs * meanN), perRecordMs };
  }
}
