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
 * The production services, with any part given replaced. On PostgreSQL an account's batches may
 * overlap (the pool has connections to spare, and a batch waits on the network); PGlite runs one
 * transaction at a time, so one batch at a time gathers the most beacons.
 */
export function collectServicesFor(db: Database, given: Partial<CollectServices> = {}): CollectServices {
  return {
    limits: given.limits ?? COLLECT_LIMITS,
    accounts: given.accounts ?? createCollectAccounts(db),
    writer:
      given.writer ??
      createBeaconWriter(db, createAdIndexCache(), { concurrency: db.kind === "postgres" ? 3 : 1 }),
  };
}
