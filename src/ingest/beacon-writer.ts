import type { AdIndexCache } from "../attribution/ad-index-cache.ts";
import type { Database } from "../db/client.ts";
import type { Beacon } from "./beacon.ts";
import { beaconKeys, type Received, writeBeaconBatch } from "./beacon-batch.ts";
import { createGroupCommit, type GroupCommitOptions } from "./group-commit.ts";

/** Stores a beacon; resolves once its transaction has committed, rejects if it was not written. */
export interface BeaconWriter {
  write(accountId: string, beacon: Beacon, receivedAt: Date): Promise<void>;
}

export type BeaconWriterOptions = Pick<GroupCommitOptions, "concurrency" | "maxBatch">;

/**
 * Beacons group-committed (group-commit.ts): each batch one transaction, each beacon answered after
 * its commit. A beacon whose id the account already holds (a resend, or a second copy in the same
 * batch) resolves as the first copy did and writes nothing; a beacon refused because its connection
 * or commit failed may have been stored, and the tracking script's resend with the same id is then
 * stored once (beacon_receipts).
 */
export function createBeaconWriter(
  db: Database,
  adIndexes: AdIndexCache,
  options: BeaconWriterOptions = {},
): BeaconWriter {
  const group = createGroupCommit<Received, void>(
    async (accountId, batch) => {
      await db.tenant(accountId, (tx) => writeBeaconBatch(tx, accountId, batch, adIndexes));
      return batch.map(() => undefined);
    },
    { ...options, keysOf: ({ beacon }) => beaconKeys(beacon) },
  );
  return { write: (accountId, beacon, receivedAt) => group.submit(accountId, { beacon, receivedAt }) };
}
