import type { ChangeFeed } from "../db/change-feed.ts";
import type { Database } from "../db/client.ts";
import { findKeyByHash, type KeyRecord } from "../queries/find-key-by-hash.ts";

/** Finds the key a request presents (by SHA-256); the pipeline judges revocation, expiry and plan. */
export interface KeyStore {
  find(keyHash: string): Promise<KeyRecord | null>;
}

/**
 * Keeps found keys in memory. Whatever a record holds (revocation, expiry, scopes, plan, timezone,
 * currency) changes only with a move of `changes.generation()` — an administration of this process
 * on the embedded database; a notification from PostgreSQL, whoever wrote it — and an entry from an
 * earlier generation is never used, so a revoked key or a downgraded plan answers on the very next
 * request. While the feed is not trusted (PostgreSQL's listening connection is down), every request
 * asks the database. Expiry is judged by the pipeline on every request from the record's `expires_at`.
 */
export function createCachedKeyStore(db: Database, changes: ChangeFeed, maxEntries = 10_000): KeyStore {
  const entries = new Map<string, { record: KeyRecord; generation: number }>();
  return {
    async find(hash) {
      const trusted = changes.trusted();
      const generation = changes.generation();
      const cached = entries.get(hash);
      if (trusted && cached && cached.generation === generation) return cached.record;
      entries.delete(hash);
      const record = await db.keyLookup(hash, (tx) => findKeyByHash(tx, hash));
      // Unknown keys are not kept: the failed-auth throttle bounds what they cost.
      if (record && trusted) {
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (!oldest.done) entries.delete(oldest.value);
        }
        // The generation read before the lookup: a change announced meanwhile makes this entry
        // stale at once.
        entries.set(hash, { record, generation });
      }
      return record;
    },
  };
}
