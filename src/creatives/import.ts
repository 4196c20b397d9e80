import { z } from "zod";
import type { Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { creativeUpload } from "../queries/creative-upload.ts";
import { type CreativeFields, importCreative } from "../queries/import-creative.ts";
import { reserveSize } from "../queries/reserve-size.ts";
import { UPLOAD_TYPES, type UploadType } from "./uploads.ts";

const text = (max: number) =>
  z
    .string()
    .max(max, { error: `at most ${max} characters` })
    .nullish();

/** SPEC "Resource: creative": the recognized fields; any other is refused, naming it. */
export const creativeSchema = z
  .object({
    angle: text(200),
    primary_text: text(5000),
    headline: text(500),
    hook: text(1000),
    cta: text(100),
    destination_url: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
      .max(2000)
      .nullish(),
    asset_url: z.string().max(2000).nullish(),
    asset_kind: z.enum(["image", "video"], { error: "must be image or video" }).nullish(),
    variant_label: text(200),
    visual_subtype: text(200),
    funnel: text(100),
    product: text(200),
    audience: text(500),
    video_script: text(20000),
    source: z.record(z.string(), z.unknown()).nullish(),
  })
  .strict();

export interface ImportResult {
  id: string;
  external_ref: string;
  angle: string | null;
  score: number | null;
  en_attente: number;
}

/**
 * POST /creatives/import: into the reserve, never published, no budget touched and no ad network
 * contacted. An asset must be one this account uploaded, named by the exact asset_url it was given.
 */
export async function importToReserve(
  tx: Sql,
  accountId: string,
  params: { externalRef: string; creative: CreativeFields; now: Date },
): Promise<ImportResult> {
  const creative = { ...params.creative };
  if (creative.asset_url) {
    const upload = await creativeUpload(tx, accountId, { assetUrl: creative.asset_url, now: params.now });
    if (!upload) {
      throw ApiError.validation(
        "creative.asset_url: not an asset_url this account received from /creatives/upload-url",
      );
    }
    if (!upload.uploaded) throw ApiError.validation("creative.asset_url: no file was uploaded to it yet");
    const kind = UPLOAD_TYPES[upload.content_type as UploadType].kind;
    if (creative.asset_kind && creative.asset_kind !== kind) {
      throw ApiError.validation(`creative.asset_kind: the asset is ${upload.content_type}, an ${kind}`);
    }
    creative.asset_kind = kind;
  }
  const imported = await importCreative(tx, accountId, { externalRef: params.externalRef, creative });
  return {
    id: imported.id,
    external_ref: imported.external_ref,
    angle: imported.angle,
    score: imported.score,
    en_attente: await reserveSize(tx, accountId),
  };
}
