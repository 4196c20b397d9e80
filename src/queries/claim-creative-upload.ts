import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Takes an upload authorization for one PUT (`claim`), releases it when that PUT failed
 * (`release`: the client may try again before it expires), or marks the file stored (`finish`).
 * `claim` answers false when another PUT has it, it was used, or it expired.
 */
export async function claimCreativeUpload(
  db: Sql,
  accountId: string,
  params: { id: string; now: Date } & ({ step: "claim" | "release" } | { step: "finish"; sizeBytes: number }),
): Promise<boolean> {
  const at = params.now.toISOString();
  let change = sql`set claimed_at = null where uploaded_at is null`;
  if (params.step === "claim") {
    change = sql`set claimed_at = ${at}::timestamptz
                 where claimed_at is null and uploaded_at is null and expires_at > ${at}::timestamptz`;
  } else if (params.step === "finish") {
    change = sql`set uploaded_at = ${at}::timestamptz, size_bytes = ${params.sizeBytes} where uploaded_at is null`;
  }
  const changed = await rows<{ id: string }>(
    db,
    sql`update creative_uploads ${change} and account_id = ${accountId} and id = ${params.id} returning id`,
  );
  return changed.length > 0;
}
