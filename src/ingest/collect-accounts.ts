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
 * must work.
 */
export function createCollectAccounts(
  db: Database,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): CollectAccounts {
  const ttlMs = options.ttlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { accountId: string; expiresAt: number; generation: number }>();
  const cached = async (key: string, lookUp: () => Promise<string | null>) => {
    const generation = db.adminGeneration();
    const hit = entries.get(key);
    if (hit && hit.generation === generation && hit.expiresAt > now()) return hit.accountId;
    entries.delete(key);
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
