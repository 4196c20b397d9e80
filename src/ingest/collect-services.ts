import { createAdIndexCache } from "../attribution/ad-index-cache.ts";
import type { Database } from "../db/client.ts";
import { type BeaconWriter, createBeaconWriter } from "./beacon-writer.ts";
import { type CollectAccounts, createCollectAccounts } from "./collect-accounts.ts";

/** Beacons per minute: a flood from one address, or against one account, cannot starve the API. */
export interface CollectLimits {
  perIp: number;
  perAccount: number;
}

export const COLLECT_LIMITS: CollectLimits = { perIp: 600, perAccount: 60_000 };

/** What `/api/collect` runs on besides the counters and the clock. */
export interface CollectServices {
  limits: CollectLimits;
  accounts: CollectAccounts;
  writer: BeaconWriter;
}

/**
 * The production services, with any part given replaced. PGlite: one batch per account at a time (it
 * runs one transaction at a time anyway, and a second batch formed early would only be smaller).
 * PostgreSQL: two, of disjoint visitors and contacts (beacon-batch.ts `beaconKeys`), so that one
 * batch's statements run while the other's answers travel and Node prepares the next: measured on 2
 * cores (bench/collect.ts), 1 beat 3 and 6 when a batch cost most of its time in triggers planned
 * at each call; with those planned once (migration 0038) the round trips dominate and 2 beat 1. The
 * batch grows with the load (up to 200).
 */
export function collectServicesFor(db: Database, given: Partial<CollectServices> = {}): CollectServices {
  const concurrency = db.kind === "postgres" ? 2 : 1;
  return {
    limits: given.limits ?? COLLECT_LIMITS,
    accounts: given.accounts ?? createCollectAccounts(db),
    writer: given.writer ?? createBeaconWriter(db, createAdIndexCache(), { concurrency, maxBatch: 200 }),
  };
}
