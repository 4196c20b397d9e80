import type { Database } from "../db/client.ts";
import { accountByClientKey } from "../queries/account-by-client-key.ts";
import { accountByHost } from "../queries/account-by-host.ts";

/** Which account a beacon belongs to: by its client key, or by the first-party host it was sent to. */
export interface CollectAccounts {
  byClientKey(clientKey: string): Promise<string | null>;
  byHost(host: string): Promise<string | null>;
}

/**
 * Remembers found accounts for `ttlMs` (a lookup is a transaction of its own, as costly as the
 * beacon's write). Client keys never change; what the TTL bounds is how long a removed tracking host
 * or a deleted account keeps being accepted by a process that did not make the change (another
 * instance, or the CLI on PostgreSQL). Any administration transaction of this process (`ascribe domains
 * remove` on the embedded database, which runs inside the server) empties the cache at once. Unknown
 * keys and hosts are not kept: the per-IP limit bounds what they cost, and a key created a moment ago
 * must work. Concurrent misses of one key share one lookup: at start-up, or when an entry expires under
 * load, the beacons of that moment wait for one transaction instead of each running its own.
 */
export function createCollectAccounts(
  db: Database,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): CollectAccounts {
  const ttlMs = options.ttlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { accountId: string; expiresAt: number; generation: number }>();
  const inFlight = new Map<string, { generation: number; lookup: Promise<string | null> }>();
  const cached = (key: string, lookUp: () => Promise<string | null>): Promise<string | null> => {
    const generation = db.adminGeneration();
    const hit = entries.get(key);
    if (hit && hit.generation === generation && hit.expiresAt > now()) return Promise.resolve(hit.accountId);
    entries.delete(key);
    // A lookup started before an administration transaction of this process may have read the old state.
    const running = inFlight.get(key);
    if (running && running.generation === generation) return running.lookup;
    const lookup = remember(key, generation, lookUp).finally(() => {
      if (inFlight.get(key)?.lookup === lookup) inFlight.delete(key);
    });
    inFlight.set(key, { generation, lookup });
    return lookup;
  };
  const remember = async (key: string, generation: number, lookUp: () => Promise<string | null>) => {
    const accountId = await lookUp();
    if (accountId) {
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(key, { accountId, expiresAt: now() + ttlMs, generation });
    }
    return accountId;
  };
  return {
    byClientKey: (clientKey) =>
      cached(
        `key:${clientKey}`,
        async () =>
          (await db.clientKeyLookup(clientKey, (tx) => accountByClientKey(tx, clientKey)))?.id ?? null,
      ),
    byHost: (host) => cached(`host:${host}`, () => db.hostLookup(host, (tx) => accountByHost(tx, host))),
  };
}
