import type { Database } from "../db/client.ts";
import { findKeyByHash, type KeyRecord } from "../queries/find-key-by-hash.ts";

/** Finds the key a request presents (by SHA-256); the pipeline judges revocation, expiry and plan. */
export interface KeyStore {
  find(keyHash: string): Promise<KeyRecord | null>;
}

/** Asks the database every time: right wherever other processes may revoke keys (PostgreSQL). */
export function createDirectKeyStore(db: Database): KeyStore {
  return { find: (hash) => db.keyLookup(hash, (tx) => findKeyByHash(tx, hash)) };
}

/**
 * Keeps found keys in memory, for a database only this process writes (the embedded one: DATA_DIR
 * is locked, and the CLI's commands run inside the server). Keys and plans change only through
 * administration transactions, and each one moves `adminGeneration` on: an entry from an earlier
 * generation is never used, so a revoked key or a downgraded plan answers on the very next request.
 * Expiry is judged by the pipeline on every request from the record's `expires_at`.
 */
export function createCachedKeyStore(db: Database, maxEntries = 10_000): KeyStore {
  const entries = new Map<string, { record: KeyRecord; generation: number }>();
  return {
    async find(hash) {
      const generation = db.adminGeneration();
      const cached = entries.get(hash);
      if (cached && cached.generation === generation) return cached.record;
      entries.delete(hash);
      const record = await db.keyLookup(hash, (tx) => findKeyByHash(tx, hash));
      // Unknown keys are not kept: the failed-auth throttle bounds what they cost.
      if (record) {
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (!oldest.done) entries.delete(oldest.value);
        }
        // The generation read before the lookup: an administration that committed meanwhile makes
        // this entry stale at once.
        entries.set(hash, { record, generation });
      }
      return record;
    },
  };
}
