/** mulberry32: a small, fast, seeded generator; the same seed gives the same sequence everywhere. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes a seed with a stream number, so each part of the data set has its own independent sequence. */
export function mixSeed(seed: number, stream: number): number {
  let h = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

const HEX = "0123456789abcdef";
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Helpers over one seeded sequence. Nothing here reads the clock or Math.random. */
export class Rng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(list: readonly T[]): T {
    const value = list[Math.floor(this.next() * list.length)];
    if (value === undefined) throw new Error("pick from an empty list");
    return value;
  }

  /** A pick weighted by `weight` (weights need not add up to 1). */
  weighted<T>(list: readonly T[], weight: (item: T) => number): T {
    let total = 0;
    for (const item of list) total += weight(item);
    let r = this.next() * total;
    for (const item of list) {
      r -= weight(item);
      if (r < 0) return item;
    }
    return this.pick(list);
  }

  /** A string of `n` decimal digits, the first one not zero. */
  digits(n: number): string {
    let out = String(this.int(1, 9));
    for (let i = 1; i < n; i++) out += String(this.int(0, 9));
    return out;
  }

  /** A 32-bit unsigned integer. */
  word(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  hex(n: number): string {
    let out = "";
    while (out.length < n) {
      const w = this.word();
      out += `${BYTE_HEX[w >>> 24]}${BYTE_HEX[(w >>> 16) & 255]}${BYTE_HEX[(w >>> 8) & 255]}${BYTE_HEX[w & 255]}`;
    }
    return out.length === n ? out : out.slice(0, n);
  }

  /** Letters and digits, five characters per draw. */
  alnum(n: number): string {
    const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let out = "";
    while (out.length < n) {
      let w = this.word();
      for (let i = 0; i < 5 && out.length < n; i++) {
        out += chars[w % 62];
        w = Math.floor(w / 62);
      }
    }
    return out;
  }

  /** A version-4-shaped UUID drawn from the sequence (deterministic, not random). */
  uuid(): string {
    const s = this.hex(32);
    const variant = HEX[8 + (this.word() & 3)] ?? "8";
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-${variant}${s.slice(17, 20)}-${s.slice(20)}`;
  }
}
