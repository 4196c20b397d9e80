import { randomUUID } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Sql } from "../db/client.ts";
import { accounts, members, users } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { linkMail, type Mailer } from "../people/mailer.ts";
import { issueLink, setPasswordUrl } from "../people/one-time-links.ts";
import { isManager, normalizeEmail, ROLES, type Role } from "../people/person.ts";
import { requireAccount } from "./accounts.ts";

/** Where invitations are sent from: the public address for the link, SMTP when configured. */
export interface InviteDeps {
  db: Database;
  mailer: Mailer;
  siteUrl: () => string;
}

export const addMemberInput = z.object({
  account: z.uuid(),
  email: z.email(),
  role: z.enum(ROLES),
});

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
  return { account_id: accountId, email: normalized, role, userId: user.id };
}

/**
 * The one-time link that lets a member choose a password, issued in the caller's transaction;
 * mailed (after commit, by `deliverInvitation`) when SMTP is configured.
 */
export async function invitationFor(tx: Sql, userId: string, now: Date, siteUrl: string): Promise<string> {
  return setPasswordUrl(siteUrl, await issueLink(tx, userId, "invite", now));
}

/**
 * Mails an invitation when SMTP is configured. The invitation is already saved: a failed delivery
 * is reported beside the link (printed, shown to the admin), never thrown.
 */
export async function deliverInvitation(
  deps: InviteDeps,
  to: string,
  url: string,
  accountName: string,
): Promise<{ mailed: boolean; mail_error?: string }> {
  if (!deps.mailer.sends) return { mailed: false };
  try {
    await deps.mailer.send(linkMail(to, url, "invite", accountName));
    return { mailed: true };
  } catch (err) {
    return { mailed: false, mail_error: err instanceof Error ? err.message : String(err) };
  }
}

async function accountName(tx: Sql, accountId: string): Promise<string> {
  const [row] = await tx.select({ name: accounts.name }).from(accounts).where(eq(accounts.id, accountId));
  return row?.name ?? "";
}

/** `members add` and the members page's invitation: adds the member and issues their link. */
export async function inviteMember(
  deps: InviteDeps,
  input: z.input<typeof addMemberInput>,
  now = new Date(),
) {
  const m = addMemberInput.parse(input);
  const added = await deps.db.admin(m.account, async (tx) => {
    await requireAccount(tx, m.account);
    await refuseLastOwnerChange(tx, m.account, m.email, m.role);
    const member = await addMember(tx, m.account, m.email, m.role);
    const inviteUrl = await invitationFor(tx, member.userId, now, deps.siteUrl());
    return { ...member, inviteUrl, name: await accountName(tx, m.account) };
  });
  const delivery = await deliverInvitation(deps, added.email, added.inviteUrl, added.name);
  return {
    account_id: added.account_id,
    email: added.email,
    role: added.role,
    invite_url: added.inviteUrl,
    ...delivery,
  };
}

export const inviteUserInput = z.object({ account: z.uuid(), email: z.email() });

/** `users invite`: a new one-time link for someone already a member. */
export async function reinviteMember(
  deps: InviteDeps,
  input: z.input<typeof inviteUserInput>,
  now = new Date(),
) {
  const i = inviteUserInput.parse(input);
  const issued = await deps.db.admin(i.account, async (tx) => {
    await requireAccount(tx, i.account);
    const member = await memberByEmail(tx, i.account, i.email);
    if (!member) throw new ApiError("not_found", {}, `${i.email} is not a member of account ${i.account}`);
    const inviteUrl = await invitationFor(tx, member.userId, now, deps.siteUrl());
    return { email: normalizeEmail(i.email), inviteUrl, name: await accountName(tx, i.account) };
  });
  const delivery = await deliverInvitation(deps, issued.email, issued.inviteUrl, issued.name);
  return { account_id: i.account, email: issued.email, invite_url: issued.inviteUrl, ...delivery };
}

async function memberByEmail(tx: Sql, accountId: string, email: string) {
  const [row] = await tx
    .select({ userId: members.userId, role: members.role })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.accountId, accountId), sql`${users.email} = ${normalizeEmail(email)}`));
  return row ?? null;
}

/**
 * An account always keeps an owner: the last one can neither leave nor be demoted. The owners'
 * rows are locked, so two owners demoting each other at once cannot both succeed.
 */
async function refuseLastOwnerChange(tx: Sql, accountId: string, email: string, next: Role | null) {
  const current = await memberByEmail(tx, accountId, email);
  if (current?.role !== "owner" || next === "owner") return;
  const owners = await tx
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.accountId, accountId), eq(members.role, "owner")))
    .for("update");
  if (owners.length <= 1)
    throw new ApiError(
      "forbidden",
      {},
      "the last owner can neither leave nor be demoted: make another owner first",
    );
}

export const listMembersInput = z.object({ account: z.uuid() });

/** Members with their role and whether they have chosen a password yet. */
export async function listMembers(db: Database, input: z.input<typeof listMembersInput>) {
  const { account } = listMembersInput.parse(input);
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    const found = await tx
      .select({
        email: users.email,
        role: members.role,
        joined_at: members.createdAt,
        has_password: sql<boolean>`${users.passwordHash} is not null`,
      })
      .from(members)
      .innerJoin(users, eq(users.id, members.userId))
      .where(eq(members.accountId, account))
      .orderBy(asc(users.email));
    return found.map((m) => ({ ...m, joined_at: new Date(m.joined_at).toISOString() }));
  });
}

export const changeRoleInput = z.object({ account: z.uuid(), email: z.email(), role: z.enum(ROLES) });

export async function changeMemberRole(db: Database, input: z.input<typeof changeRoleInput>) {
  const c = changeRoleInput.parse(input);
  return db.admin(c.account, async (tx) => {
    const member = await memberByEmail(tx, c.account, c.email);
    if (!member) throw new ApiError("not_found", {}, `${c.email} is not a member of this account`);
    await refuseLastOwnerChange(tx, c.account, c.email, c.role);
    await tx
      .update(members)
      .set({ role: c.role })
      .where(and(eq(members.accountId, c.account), eq(members.userId, member.userId)));
    return { account_id: c.account, email: normalizeEmail(c.email), role: c.role };
  });
}

export const removeMemberInput = z.object({ account: z.uuid(), email: z.email() });

export async function removeMember(db: Database, input: z.input<typeof removeMemberInput>) {
  const r = removeMemberInput.parse(input);
  return db.admin(r.account, async (tx) => {
    const member = await memberByEmail(tx, r.account, r.email);
    if (!member) throw new ApiError("not_found", {}, `${r.email} is not a member of this account`);
    await refuseLastOwnerChange(tx, r.account, r.email, null);
    await tx.delete(members).where(and(eq(members.accountId, r.account), eq(members.userId, member.userId)));
    return { account_id: r.account, email: normalizeEmail(r.email), removed: true };
  });
}

/** Keys and members are managed by the account's owner or administrators only. */
export async function requireKeyManager(tx: Sql, accountId: string, email: string): Promise<string> {
  const row = await memberByEmail(tx, accountId, email);
  if (!row) throw new ApiError("forbidden", {}, `${email} is not a member of account ${accountId}`);
  if (!isManager(row.role)) {
    throw new ApiError("forbidden", {}, `${email} is a ${row.role}: only an owner or admin can manage keys`);
  }
  return row.userId;
}
