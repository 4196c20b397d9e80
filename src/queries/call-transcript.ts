import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";

export interface TranscriptSegmentRow {
  account_id: string;
  idx: number;
  start_ms: number;
  end_ms: number;
  speaker_id: string | null;
  speaker_label: string | null;
  speaker_email: string | null;
  text: string;
  confidence: number | null;
}

/**
 * A call's transcript segments in order, or null when the account has no such call (another
 * account's call is not visible here: the caller answers both alike).
 */
export async function callTranscript(db: Sql, accountId: string, params: { artifactId: number }) {
  const found = await rows<{ found: boolean }>(
    db,
    sql`select exists (select 1 from calls where account_id = ${accountId} and artifact_id = ${params.artifactId}) as found`,
  );
  if (!found[0]?.found) return null;
  return ownedRows(
    await rows<TranscriptSegmentRow>(
      db,
      sql`
      select s.account_id, s.idx, s.start_ms, s.end_ms, s.speaker_id, s.speaker_label, s.speaker_email,
             s.text, s.confidence::float8 as confidence
      from call_transcript_segments s
      where s.account_id = ${accountId} and s.artifact_id = ${params.artifactId}
      order by s.idx`,
    ),
  );
}
