import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Database, Sql } from "../db/client.ts";
import { users, userTokens, webSessions } from "../db/schema.ts";
import { normalizeEmail } from "./person.ts";
import { isWellFormedToken, newSecretToken, tokenHash } from "./secret-token.ts";

export type LinkPurpose = "invite" | "reset";

/** An invitation waits a week; a password reset, an hour. */
export const LINK_LIFETIME_MS: Record<LinkPurpose, number> = {
  invite: 7 * 24 * 3_600_000,
  reset: 3_600_000,
};

/** Where a one-time link points: the page that sets the password. */
export function setPasswordUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/set-password/${token}`;
}

/**
 * Issues a one-time link for a user, inside the caller's (owner) transaction. Earlier unused links
 * of the same purpose stop working: only the newest one printed or mailed is valid.
 */
export async function issueLink(tx: Sql, userId: string, purpose: LinkPurpose, now: Date): Promise<string> {
  await tx
    .update(userTokens)
    .set({ usedAt: now })
    .where(and(eq(userTokens.userId, userId), eq(userTokens.purpose, purpose), isNull(userTokens.usedAt)));
  const token = newSecretToken();
  await tx.insert(userTokens).values({
    tokenHash: tokenHash(token),
    userId,
    purpose,
    createdAt: now,
    expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[purpose]),
  });
  return token;
}

export interface LinkHolder {
  userId: string;
  email: string;
  purpose: LinkPurpose;
}

/** Whom a still-valid link belongs to, without using it (a page shown twice, a mail scanner's GET). */
export async function linkHolder(db: Database, token: string, now: Date): Promise<LinkHolder | null> {
  if (!isWellFormedToken(token)) return null;
  const [row] = await db.admin(null, (tx) =>
    tx
      .select({ userId: userTokens.userId, email: users.email, purpose: userTokens.purpose })
      .from(userTokens)
      .innerJoin(users, eq(users.id, userTokens.userId))
      .where(
        and(
          eq(userTokens.tokenHash, tokenHash(token)),
          isNull(userTokens.usedAt),
          gt(userTokens.expiresAt, now),
        ),
      ),
  );
  return row ?? null;
}

/**
 * Uses a link once: sets the password and ends every session the user had (a reset signs out
 * everywhere). Null when the link is unknown, used or expired; a link raced twice is used once.
 */
export async function redeemLink(
  db: Database,
  token: string,
  passwordHash: string,
  now: Date,
): Promise<LinkHolder | null> {
  if (!isWellFormedToken(token)) return null;
  return db.admin(null, async (tx) => {
    const [used] = await tx
      .update(userTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(userTokens.tokenHash, tokenHash(token)),
          isNull(userTokens.usedAt),
          gt(userTokens.expiresAt, now),
        ),
      )
      .returning({ userId: userTokens.userId, purpose: userTokens.purpose });
    if (!used) return null;
    const [user] = await tx
      .update(users)
      .set({ passwordHash })
      .where(eq(users.id, used.userId))
      .returning({ email: users.email });
    await tx.delete(webSessions).where(eq(webSessions.userId, used.userId));
    // Other unused links of this user are void too: the password they would set is now chosen.
    await tx
      .update(userTokens)
      .set({ usedAt: now })
      .where(and(eq(userTokens.userId, used.userId), isNull(userTokens.usedAt)));
    return { userId: used.userId, email: user?.email ?? "", purpose: used.purpose };
  });
}

/** The user with this email, for "forgot password" and sign-in; null when there is none. */
export async function userByEmail(
  db: Database,
  email: string,
): Promise<{ id: string; email: string; passwordHash: string | null } | null> {
  const [row] = await db.admin(null, (tx) =>
    tx
      .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
      .from(users)
      .where(sql`${users.email} = ${normalizeEmail(email)}`),
  );
  return row ?? null;
}
