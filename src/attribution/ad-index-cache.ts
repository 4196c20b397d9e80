import type { Sql } from "../db/client.ts";
import { knownAds, knownAdsDigest } from "../queries/known-ads.ts";
import { type AdIndex, buildAdIndex } from "./ad-resolution.ts";

/** The account's ad index, for a transaction about to resolve touches. */
export interface AdIndexCache {
  get(tx: Sql, accountId: string): Promise<AdIndex>;
}

/**
 * Keeps each account's ad index between transactions, checked against the database every time it is
 * used: the digest of the account's ads (`knownAdsDigest`, one row) is read in the caller's
 * transaction, and the index is rebuilt when it differs. So whoever writes ads — an import, the demo
 * seed, the CLI in another process, a hand-written UPDATE — the next touch resolved after that commit
 * sees the new catalog, with no hook to remember in each writer and no window of staleness. The check
 * costs one indexed scan of the account's ads per call (not per beacon: the beacon writer calls it
 * once per batch); a version column kept by a trigger would make it O(1), at the price of a migration.
 */
export function createAdIndexCache(maxAccounts = 1_000): AdIndexCache {
  const entries = new Map<string, { digest: string; index: AdIndex }>();
  return {
    async get(tx, accountId) {
      const digest = await knownAdsDigest(tx, accountId);
      const cached = entries.get(accountId);
      if (cached && cached.digest === digest) return cached.index;
      // Read in the same transaction as the digest: a catalog committed between the two statements
      // is stored under the older digest, which only costs one more rebuild next time.
      const index = buildAdIndex(await knownAds(tx, accountId));
      entries.delete(accountId);
      if (entries.size >= maxAccounts) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(accountId, { digest, index });
      return index;
    },
  };
}
