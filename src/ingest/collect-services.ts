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
 * The production services, with any part given replaced. One batch per account at a time, on both
 * databases: PGlite runs one transaction at a time anyway, and on PostgreSQL (bench/collect.ts, 2
 * cores) 1 batch in flight beat 3 and 6, because larger batches spread each transaction's fixed
 * statements over more beacons; the batch grows with the load (up to 200).
 */
export function collectServicesFor(db: Database, given: Partial<CollectServices> = {}): CollectServices {
  return {
    limits: given.limits ?? COLLECT_LIMITS,
    accounts: given.accounts ?? createCollectAccounts(db),
    writer: given.writer ?? createBeaconWriter(db, createAdIndexCache(), { concurrency: 1, maxBatch: 200 }),
  };
}
