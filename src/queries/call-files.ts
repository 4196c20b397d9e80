import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface CallFiles {
  account_id: string;
  artifact_id: number;
  audio_path: string | null;
  audio_content_type: string | null;
  video_path: string | null;
}

/** Where a call's recordings are stored, or null when the account has no such call. */
export async function callFiles(db: Sql, accountId: string, params: { artifactId: number }) {
  const found = await rows<CallFiles>(
    db,
    sql`
    select account_id, artifact_id::float8 as artifact_id, audio_path, audio_content_type, video_path
    from calls
    where account_id = ${accountId} and artifact_id = ${params.artifactId}`,
  );
  return found[0] ?? null;
}
