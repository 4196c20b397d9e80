import { randomUUID } from "node:crypto";
import { and, eq, isNull, or } from "drizzle-orm";
import { z } from "zod";
import { expiryDate, generateApiKey } from "../auth/api-key.ts";
import { isGrantedScope } from "../auth/scopes.ts";
import type { Database } from "../db/client.ts";
import { apiKeys } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { accountKeys } from "../queries/account-keys.ts";
import { requireAccount } from "./accounts.ts";
import { requireKeyManager } from "./members.ts";

const scopesSchema = z
  .array(z.string().trim())
  .min(1, "at least one scope")
  .superRefine((scopes, ctx) => {
    for (const s of scopes) {
      if (!isGrantedScope(s)) ctx.addIssue({ code: "custom", message: `unknown scope ${s}` });
    }
  });

export const createKeyInput = z.object({
  account: z.uuid(),
  as: z.email(),
  name: z.string().trim().min(1).max(100),
  scopes: scopesSchema,
  expires: z.enum(["never", "90d", "1y"]).default("never"),
});

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  scopes: string[];
  expires_at: string | null;
}

export async function createKey(
  db: Database,
  input: z.input<typeof createKeyInput>,
  now = new Date(),
): Promise<CreatedKey> {
  const k = createKeyInput.parse(input);
  return db.admin(k.account, async (tx) => {
    const account = await requireAccount(tx, k.account);
    const userId = await requireKeyManager(tx, k.account, k.as);
    if (account.plan === "free")
      throw new ApiError("plan_free_no_api", {}, "the free plan has no API access");
    const generated = generateApiKey();
    const id = randomUUID();
    const scopes = [...new Set(k.scopes)];
    const expiresAt = expiryDate(k.expires, now);
    await tx.insert(apiKeys).values({
      accountId: k.account,
      id,
      prefix: generated.prefix,
      keyHash: generated.hash,
      name: k.name,
      scopes,
      createdBy: userId,
      createdAt: now,
      expiresAt,
    });
    return {
      id,
      key: generated.key,
      prefix: generated.prefix,
      name: k.name,
      scopes,
      expires_at: expiresAt?.toISOString() ?? null,
    };
  });
}

export const listKeysInput = z.object({ account: z.uuid() });

export async function listKeys(db: Database, input: z.input<typeof listKeysInput>) {
  const { account } = listKeysInput.parse(input);
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    return accountKeys(tx, account);
  });
}

export const revokeKeyInput = z.object({
  account: z.uuid(),
  as: z.email(),
  key: z.string().trim().min(1, "a key id or prefix"),
});

export async function revokeKey(db: Database, input: z.input<typeof revokeKeyInput>, now = new Date()) {
  const r = revokeKeyInput.parse(input);
  const revoked = await db.admin(r.account, async (tx) => {
    await requireAccount(tx, r.account);
    await requireKeyManager(tx, r.account, r.as);
    const byId = z.uuid().safeParse(r.key).success;
    const matches = await tx
      .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.accountId, r.account),
          byId ? or(eq(apiKeys.id, r.key), eq(apiKeys.prefix, r.key)) : eq(apiKeys.prefix, r.key),
        ),
      );
    const match = matches[0];
    if (!match) throw new ApiError("not_found", {}, `no key ${r.key} in account ${r.account}`);
    if (matches.length > 1)
      throw new ApiError("validation", {}, `prefix ${r.key} names several keys: use the id`);
    if (match.revokedAt) return { id: match.id, revoked_at: match.revokedAt.toISOString() };
    await tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.accountId, r.account), eq(apiKeys.id, match.id), isNull(apiKeys.revokedAt)));
    return { id: match.id, revoked_at: now.toISOString() };
  });
  await db.keyChangesSeen();
  return revoked;
}
