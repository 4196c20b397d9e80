import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { SecretBox } from "../crypto/secret-box.ts";
import { type Database, rows, type Sql } from "../db/client.ts";
import { requireAccount } from "./accounts.ts";

export const webhookSecretInput = z.object({ account: z.uuid() });

/** The sealing context binds a sealed secret to its account: copied to another row, it won't open. */
export function webhookSecretContext(accountId: string): string {
  return `webhook-secret:${accountId}`;
}

/** Creates or rotates the account's webhook signing secret; the only time it is shown. */
export async function rotateWebhookSecret(
  db: Database,
  secrets: SecretBox,
  input: z.input<typeof webhookSecretInput>,
): Promise<{ account_id: string; secret: string }> {
  const { account } = webhookSecretInput.parse(input);
  const secret = `whsec_${randomBytes(24).toString("base64url")}`;
  const sealed = secrets.seal(secret, webhookSecretContext(account));
  await db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    await tx.execute(sql`
      insert into account_settings (account_id, webhook_secret_sealed, updated_at)
      values (${account}, ${sealed}, now())
      on conflict (account_id) do update
        set webhook_secret_sealed = excluded.webhook_secret_sealed, updated_at = excluded.updated_at`);
  });
  return { account_id: account, secret };
}

/** The account's webhook signing secret, or null when none was created. */
export async function webhookSecret(tx: Sql, secrets: SecretBox, accountId: string): Promise<string | null> {
  const found = await rows<{ sealed: string | null }>(
    tx,
    sql`select webhook_secret_sealed as sealed from account_settings where account_id = ${accountId}`,
    { prepare: true },
  );
  const sealed = found[0]?.sealed;
  return sealed ? secrets.open(sealed, webhookSecretContext(accountId)) : null;
}
