import { type AdIndexCache, createAdIndexCache } from "../attribution/ad-index-cache.ts";
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
 * batch's statements run while the other's answers travel and Node reads the next requests. Measured
 * with bench/collect.ts on 2 shared cores, alternating: at load 13–15, 2 in flight answered 792, 817,
 * 1,771 beacons/s where 1 answered 561, 638, 1,479; at load 3, a tie (medians of 2 rounds: 2,250 and
 * 3,270 against 2,330 and 2,884): two batches are each half as large, and a batch costs PostgreSQL
 * 2–4 ms whatever its size. (Before migration 0038, when a batch spent most of its time planning
 * trigger statements, 1 had beaten 3 and 6.) The batch grows with the load (up to 200).
 */
export function collectServicesFor(
  db: Database,
  given: Partial<CollectServices> = {},
  adIndexes: AdIndexCache = createAdIndexCache(),
): CollectServices {
  const concurrency = db.kind === "postgres" ? 2 : 1;
  return {
    limits: given.limits ?? COLLECT_LIMITS,
    accounts: given.accounts ?? createCollectAccounts(db),
    writer: given.writer ?? createBeaconWriter(db, adIndexes, { concurrency, maxBatch: 200 }),
  };
}
