import { and, eq, sql } from "drizzle-orm";
import { type Database, rows } from "../db/client.ts";
import { members, webSessions } from "../db/schema.ts";
import type { Role } from "./person.ts";
import { isWellFormedToken, newSecretToken, tokenHash } from "./secret-token.ts";

/** A session ends after a week without use, and a month after sign-in whatever its use. */
export const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
/** Last use is written at most this often, not on every page. */
const TOUCH_EVERY_MS = 60_000;

export interface Membership {
  accountId: string;
  name: string;
  role: Role;
  plan: "free" | "pro" | "business";
  timezone: string;
  currency: string;
}

export interface SignedIn {
  userId: string;
  /** When the session began (epoch ms): it ends SESSION_ABSOLUTE_MS later. */
  createdAt: number;
  email: string;
  csrfToken: string;
  /** The account the pages show: the session's choice, else the first by name; null without any. */
  account: Membership | null;
  memberships: Membership[];
}

/** A new session (a new id at every sign-in: no fixation); the cookie gets `token`. */
export async function startSession(db: Database, userId: string, now: Date): Promise<string> {
  const token = newSecretToken();
  await db.admin(null, (tx) =>
    tx.insert(webSessions).values({
      idHash: tokenHash(token),
      userId,
      csrfToken: newSecretToken(),
      createdAt: now,
      lastSeenAt: now,
    }),
  );
  return token;
}

/**
 * The signed-in person behind a session cookie, as the request role seeing only that session;
 * an expired session is deleted and answers null.
 */
export async function findSession(db: Database, token: string, now: Date): Promise<SignedIn | null> {
  if (!isWellFormedToken(token)) return null;
  const hash = tokenHash(token);
  return db.sessionLookup(hash, async (tx) => {
    // One statement for the session, its user and their memberships: a page's fixed cost.
    const [session] = await rows<{
      userId: string;
      email: string;
      csrfToken: string;
      currentAccount: string | null;
      createdMs: number;
      lastSeenMs: number;
      memberships: Membership[];
    }>(
      tx,
      sql`
        select s.user_id as "userId", u.email, s.csrf_token as "csrfToken",
          s.current_account as "currentAccount",
          extract(epoch from s.created_at)::float8 * 1000 as "createdMs",
          extract(epoch from s.last_seen_at)::float8 * 1000 as "lastSeenMs",
          coalesce(
            (select json_agg(json_build_object(
                'accountId', a.id, 'name', a.name, 'role', m.role, 'plan', a.plan,
                'timezone', a.timezone, 'currency', a.currency) order by a.name, a.id)
             from members m join accounts a on a.id = m.account_id
             where m.user_id = s.user_id),
            '[]'::json) as memberships
        from web_sessions s join users u on u.id = s.user_id
        where s.id_hash = ${hash}`,
    );
    if (!session) return null;
    const idle = now.getTime() - session.lastSeenMs;
    const age = now.getTime() - session.createdMs;
    if (idle > SESSION_IDLE_MS || age > SESSION_ABSOLUTE_MS) {
      await tx.delete(webSessions).where(eq(webSessions.idHash, hash));
      return null;
    }
    if (idle > TOUCH_EVERY_MS)
      await tx.update(webSessions).set({ lastSeenAt: now }).where(eq(webSessions.idHash, hash));
    const { memberships } = session;
    const account = memberships.find((m) => m.accountId === session.currentAccount) ?? memberships[0] ?? null;
    return {
      userId: session.userId,
      createdAt: session.createdMs,
      email: session.email,
      csrfToken: session.csrfToken,
      account,
      memberships,
    };
  });
}

/** Shows another of the user's accounts; false when the user is not its member. */
export async function switchAccount(db: Database, token: string, accountId: string): Promise<boolean> {
  const hash = tokenHash(token);
  return db.sessionLookup(hash, async (tx) => {
    const updated = await tx
      .update(webSessions)
      .set({ currentAccount: accountId })
      .where(
        and(
          eq(webSessions.idHash, hash),
          sql`exists (select 1 from ${members} where ${members.accountId} = ${accountId} and ${members.userId} = ${webSessions.userId})`,
        ),
      )
      .returning({ idHash: webSessions.idHash });
    return updated.length === 1;
  });
}

export async function endSession(db: Database, token: string): Promise<void> {
  if (!isWellFormedToken(token)) return;
  const hash = tokenHash(token);
  await db.sessionLookup(hash, (tx) => tx.delete(webSessions).where(eq(webSessions.idHash, hash)));
}

/** Sign-out everywhere: every session of the user, on every device. */
export async function endAllSessions(db: Database, userId: string): Promise<void> {
  await db.admin(null, (tx) => tx.delete(webSessions).where(eq(webSessions.userId, userId)));
}
