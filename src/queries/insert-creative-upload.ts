import { sql } from "drizzle-orm";
import type { Sql } from "../db/client.ts";

/** Records an upload authorization (the token's hash only). */
export async function insertCreativeUpload(
  db: Sql,
  accountId: string,
  params: {
    id: string;
    path: string;
    assetUrl: string;
    contentType: string;
    tokenHash: string;
    expiresAt: Date;
  },
): Promise<void> {
  await db.execute(sql`
    insert into creative_uploads (account_id, id, path, asset_url, content_type, token_hash, expires_at)
    values (${accountId}, ${params.id}, ${params.path}, ${params.assetUrl}, ${params.contentType},
            ${params.tokenHash}, ${params.expiresAt.toISOString()}::timestamptz)`);
}
