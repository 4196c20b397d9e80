import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Sql } from "../db/client.ts";
import { members, users } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { requireAccount } from "./accounts.ts";

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export const addMemberInput = z.object({
  account: z.uuid(),
  email: z.email(),
  role: z.enum(ROLES),
});

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Adds (or re-roles) a member inside an admin transaction already scoped to the account. */
export async function addMember(tx: Sql, accountId: string, email: string, role: Role) {
  const normalized = normalizeEmail(email);
  await tx.insert(users).values({ id: randomUUID(), email: normalized }).onConflictDoNothing();
  const [user] = await tx.select({ id: users.id }).from(users).where(eq(users.email, normalized));
  if (!user) throw new Error("user row missing after upsert");
  await tx
    .insert(members)
    .values({ accountId, userId: user.id, role })
    .onConflictDoUpdate({ target: [members.accountId, members.userId], set: { role } });
  return { account_id: accountId, email: normalized, role };
}

export async function addAccountMember(db: Database, input: z.input<typeof addMemberInput>) {
  const m = addMemberInput.parse(input);
  return db.admin(m.account, async (tx) => {
    await requireAccount(tx, m.account);
    return addMember(tx, m.account, m.email, m.role);
  });
}

/** Keys are created and revoked by the account's owner or administrators only. */
export async function requireKeyManager(tx: Sql, accountId: string, email: string): Promise<string> {
  const [row] = await tx
    .select({ userId: members.userId, role: members.role })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.accountId, accountId), sql`${users.email} = ${normalizeEmail(email)}`));
  if (!row) throw new ApiError("forbidden", {}, `${email} is not a member of account ${accountId}`);
  if (row.role !== "owner" && row.role !== "admin") {
    throw new ApiError("forbidden", {}, `${email} is a ${row.role}: only an owner or admin can manage keys`);
  }
  return row.userId;
}
