import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";

export interface CreativeUploadRow {
  account_id: string;
  id: string;
  path: string;
  asset_url: string;
  content_type: string;
  token_hash: string;
  expired: boolean;
  claimed: boolean;
  uploaded: boolean;
}

/** One upload authorization of the account, by id or by the asset_url it handed out; null when none. */
export async function creativeUpload(
  db: Sql,
  accountId: string,
  params: ({ id: string } | { assetUrl: string }) & { now: Date },
): Promise<Omit<CreativeUploadRow, "account_id"> | null> {
  const match = "id" in params ? sql`u.id = ${params.id}` : sql`u.asset_url = ${params.assetUrl}`;
  const found = await rows<CreativeUploadRow>(
    db,
    sql`
    select u.account_id, u.id::text as id, u.path, u.asset_url, u.content_type, u.token_hash,
      u.expires_at <= ${params.now.toISOString()}::timestamptz as expired,
      u.claimed_at is not null as claimed,
      u.uploaded_at is not null as uploaded
    from creative_uploads u
    where u.account_id = ${accountId} and ${match}`,
  );
  return ownedRows(found)[0] ?? null;
}
