import type { Database } from "../db/client.ts";
import { tokenHash } from "./secret-token.ts";
import { endSession, findSession, SESSION_ABSOLUTE_MS, type SignedIn, switchAccount } from "./sessions.ts";

/** How pages find the person behind a session cookie, and the session changes made through it. */
export interface SessionStore {
  find(token: string, now: Date): Promise<SignedIn | null>;
  switchAccount(token: string, accountId: string): Promise<boolean>;
  end(token: string): Promise<void>;
}

/** Asks the database every time: right wherever other processes may end sessions (PostgreSQL). */
export function createDirectSessionStore(db: Database): SessionStore {
  return {
    find: (token, now) => findSession(db, token, now),
    switchAccount: (token, accountId) => switchAccount(db, token, accountId),
    end: (token) => endSession(db, token),
  };
}

/** Last use is written back at most this often: a cached session older than this is read again. */
const RECHECK_MS = 60_000;

/**
 * Keeps found sessions in memory, for a database only this process writes (the embedded one), as
 * the key cache does: every administration transaction (sign-in, sign-out everywhere, a password
 * set, a membership, role, plan or account changed) moves `adminGeneration` on and an entry of an
 * earlier generation is never used; this store's own writes drop their entry. Expiry is judged on
 * every request from the kept times; after a minute the session is read (and touched) again.
 */
export function createCachedSessionStore(db: Database, maxEntries = 10_000): SessionStore {
  const entries = new Map<string, { signedIn: SignedIn; generation: number; readAt: number }>();
  return {
    async find(token, now) {
      const hash = tokenHash(token);
      const generation = db.adminGeneration();
      const cached = entries.get(hash);
      const at = now.getTime();
      if (
        cached &&
        cached.generation === generation &&
        // Within a minute of the read the idle limit (7 days) cannot pass; the absolute one can.
        at - cached.readAt < RECHECK_MS &&
        at - cached.signedIn.createdAt <= SESSION_ABSOLUTE_MS
      )
        return cached.signedIn;
      entries.delete(hash);
      const signedIn = await findSession(db, token, now);
      if (signedIn) {
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (!oldest.done) entries.delete(oldest.value);
        }
        entries.set(hash, { signedIn, generation, readAt: at });
      }
      return signedIn;
    },
    async switchAccount(token, accountId) {
      entries.delete(tokenHash(token));
      return switchAccount(db, token, accountId);
    },
    async end(token) {
      entries.delete(tokenHash(token));
      await endSession(db, token);
    },
  };
}

/** Only the embedded database is written by this process alone, so only there may sessions be cached. */
export function sessionStoreFor(db: Database): SessionStore {
  return db.kind === "embedded" ? createCachedSessionStore(db) : createDirectSessionStore(db);
}
