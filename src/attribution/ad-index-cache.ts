import type { Sql } from "../db/client.ts";
import { adCatalogVersion, knownAds } from "../queries/known-ads.ts";
import { type AdIndex, buildAdIndex } from "./ad-resolution.ts";

/** The account's ad index, for a transaction about to resolve touches. */
export interface AdIndexCache {
  /** `version`: the catalog's version, when the caller has already read it in `tx`. */
  get(tx: Sql, accountId: string, version?: string): Promise<AdIndex>;
}

/**
 * Keeps each account's ad index between transactions, checked against the database every time it is
 * used: the version of the account's ad catalog (`adCatalogVersion`, one row by key) is read in the
 * caller's transaction, and the index is rebuilt when it differs. The version moves with every
 * statement that writes ads, by a trigger (migration 0039), so whoever writes them — an import, spend
 * sync, the demo seed, the CLI in another process, a hand-written UPDATE — the next touch resolved
 * after that commit sees the new catalog, with no hook to remember in each writer and no window of
 * staleness. The check costs the same whatever the catalog's size; it is made once per call (per
 * batch, for the beacon writer, whose opening statement reads the version).
 */
export function createAdIndexCache(maxAccounts = 1_000): AdIndexCache {
  const entries = new Map<string, { version: string; index: AdIndex }>();
  return {
    async get(tx, accountId, knownVersion) {
      const version = knownVersion ?? (await adCatalogVersion(tx, accountId));
      const cached = entries.get(accountId);
      if (cached && cached.version === version) return cached.index;
      // Read in the same transaction as the version: a catalog committed between the two statements
      // is stored under the older version, which only costs one more rebuild next time.
      const index = buildAdIndex(await knownAds(tx, accountId));
      entries.delete(accountId);
      if (entries.size >= maxAccounts) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(accountId, { version, index });
      return index;
    },
  };
}
