import type { Sql } from "../db/client.ts";
import { callFiles } from "../queries/call-files.ts";
import { mediaTypeOf, type ObjectStore, SIGNED_URL_TTL_SECONDS } from "../storage/object-store.ts";

export interface RecordingLocator {
  artifact_id: number;
  content_type: string;
  expires_in: number;
  audio_url: string;
  video_url: string | null;
  has_video: boolean;
}

/**
 * A call's recording as GET /calls/recording and the call page hand it out: signed links, valid
 * one hour, to the files that are stored. "no_call" when the account has no such call; "no_file"
 * when it has no stored audio.
 */
export async function recordingLocator(
  tx: Sql,
  files: ObjectStore,
  params: { accountId: string; artifactId: number; now: Date },
): Promise<RecordingLocator | "no_call" | "no_file"> {
  const call = await callFiles(tx, params.accountId, { artifactId: params.artifactId });
  if (call === null) return "no_call";
  const { account_id: accountId, audio_path: audio, video_path: video } = call;
  if (audio === null || !(await files.exists(accountId, audio))) return "no_file";
  const hasVideo = video !== null && (await files.exists(accountId, video));
  const contentType = call.audio_content_type ?? mediaTypeOf(audio, "audio/mpeg");
  const sign = (path: string, type: string) =>
    files.signedUrl(accountId, path, {
      contentType: type,
      expiresIn: SIGNED_URL_TTL_SECONDS,
      now: params.now,
    });
  return {
    artifact_id: call.artifact_id,
    content_type: contentType,
    expires_in: SIGNED_URL_TTL_SECONDS,
    audio_url: await sign(audio, contentType),
    video_url: hasVideo && video !== null ? await sign(video, mediaTypeOf(video, "video/mp4")) : null,
    has_video: hasVideo,
  };
}
