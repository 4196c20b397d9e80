import { randomBytes, randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Sql } from "../db/client.ts";
import { accounts, serviceState } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { rebuildReportRollup } from "../queries/rebuild-report-rollup.ts";
import { addMember, invitationFor } from "./members.ts";

export const PLANS = ["free", "pro", "business"] as const;
export type Plan = (typeof PLANS)[number];

const timezoneSchema = z.string().refine(
  (tz) => {
    try {
      new Intl.DateTimeFormat("en", { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  },
  { error: "unknown IANA timezone" },
);

export const createAccountInput = z.object({
  name: z.string().trim().min(1).max(200),
  plan: z.enum(PLANS).default("pro"),
  timezone: timezoneSchema.default("UTC"),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
    .default("EUR"),
  owner: z.email().optional(),
});

export interface CreatedAccount {
  id: string;
  name: string;
  plan: Plan;
  client_key: string;
}

/** The public key the tracking script carries in `data-client`; not a secret. */
function newClientKey(): string {
  return `ck_${randomBytes(12).toString("base64url")}`;
}

/**
 * Creates an account; with an owner and `siteUrl`, the owner's one-time link is issued in the same
 * transaction and returned as `invite_url`.
 */
export async function createAccount(
  db: Database,
  input: z.input<typeof createAccountInput>,
  invite?: { siteUrl: string; now?: Date },
): Promise<CreatedAccount & { invite_url?: string }> {
  const a = createAccountInput.parse(input);
  const id = randomUUID();
  const clientKey = newClientKey();
  return db.admin(id, async (tx) => {
    await tx
      .insert(accounts)
      .values({ id, name: a.name, plan: a.plan, timezone: a.timezone, currency: a.currency, clientKey });
    await tx.insert(serviceState).values({ name: "has_accounts", value: true }).onConflictDoNothing();
    const created = { id, name: a.name, plan: a.plan, client_key: clientKey };
    if (!a.owner) return created;
    const owner = await addMember(tx, id, a.owner, "owner");
    if (!invite) return created;
    return {
      ...created,
      invite_url: await invitationFor(tx, owner.userId, invite.now ?? new Date(), invite.siteUrl),
    };
  });
}

export const setPlanInput = z.object({ account: z.uuid(), plan: z.enum(PLANS) });

export async function setPlan(db: Database, input: z.input<typeof setPlanInput>) {
  const { account, plan } = setPlanInput.parse(input);
  const changed = await db.admin(account, async (tx) => {
    const updated = await tx
      .update(accounts)
      .set({ plan })
      .where(eq(accounts.id, account))
      .returning({ id: accounts.id, plan: accounts.plan });
    const row = updated[0];
    if (!row) throw new ApiError("not_found", {}, `account ${account} not found`);
    return row;
  });
  await db.keyChangesSeen();
  return changed;
}

export async function requireAccount(tx: Sql, accountId: string): Promise<{ plan: Plan }> {
  const found = await tx
    .select({ plan: accounts.plan })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .limit(1);
  const row = found[0];
  if (!row) throw new ApiError("not_found", {}, `account ${accountId} not found`);
  return row;
}

/**
 * Whether an account was ever created here. Forced RLS hides accounts from an owner that names no
 * tenant, so the instance records its first account in a table of its own.
 */
export async function isEmptyInstance(db: Database): Promise<boolean> {
  const found = await db.admin(null, (tx) =>
    tx.select().from(serviceState).where(eq(serviceState.name, "has_accounts")).limit(1),
  );
  return found.length === 0;
}

export const updateAccountInput = z.object({
  account: z.uuid(),
  name: createAccountInput.shape.name,
  timezone: timezoneSchema,
});

/**
 * The account's name and timezone. Reports' days follow a new timezone from the next request: the
 * rollups (kept by day in the account's timezone) are recomputed in the same transaction, so a
 * report reads the old days with the old timezone or the new days with the new one, never a mix.
 */
export async function updateAccountSettings(db: Database, input: z.input<typeof updateAccountInput>) {
  const u = updateAccountInput.parse(input);
  const updated = await db.admin(u.account, async (tx) => {
    // Locked before it is read: two changes at once compare each with what the other committed.
    const [before] = await tx
      .select({ timezone: accounts.timezone })
      .from(accounts)
      .where(eq(accounts.id, u.account))
      .for("update");
    if (!before) throw new ApiError("not_found", {}, `account ${u.account} not found`);
    const [row] = await tx
      .update(accounts)
      .set({ name: u.name, timezone: u.timezone })
      .where(eq(accounts.id, u.account))
      .returning({ id: accounts.id, name: accounts.name, timezone: accounts.timezone });
    if (!row) throw new ApiError("not_found", {}, `account ${u.account} not found`);
    if (before.timezone !== row.timezone) await rebuildReportRollup(tx, u.account);
    return row;
  });
  await db.keyChangesSeen();
  return updated;
}

export interface ListedAccount {
  id: string;
  name: string;
  plan: Plan;
  timezone: string;
  currency: string;
  created_at: string;
}

/** Every account of the instance, oldest first (`ascribe accounts list`). */
export async function listAccounts(db: Database): Promise<ListedAccount[]> {
  return db.admin(null, async (tx) => {
    // Forced row-level security shows an administration transaction that names no tenant nothing,
    // except through the listing policy (migration 0024) that this setting opens until commit.
    await tx.execute(sql`select set_config('app.account_listing', 'on', true)`);
    const found = await tx
      .select({
        id: accounts.id,
        name: accounts.name,
        plan: accounts.plan,
        timezone: accounts.timezone,
        currency: accounts.currency,
        createdAt: accounts.createdAt,
      })
      .from(accounts)
      .orderBy(accounts.createdAt, accounts.id);
    return found.map(({ createdAt, ...a }) => ({ ...a, created_at: createdAt.toISOString() }));
  });
}
