import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Database, Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { claimCreativeUpload } from "../queries/claim-creative-upload.ts";
import { creativeUpload } from "../queries/creative-upload.ts";
import { insertCreativeUpload } from "../queries/insert-creative-upload.ts";
import type { ObjectStore } from "../storage/object-store.ts";

const MIB = 1024 * 1024;

/** The media types an upload may have (SPEC), with the file extension and the size cap of each. */
export const UPLOAD_TYPES = {
  "image/jpeg": { extension: "jpg", kind: "image", maxBytes: 30 * MIB },
  "image/png": { extension: "png", kind: "image", maxBytes: 30 * MIB },
  "image/webp": { extension: "webp", kind: "image", maxBytes: 30 * MIB },
  "video/mp4": { extension: "mp4", kind: "video", maxBytes: 1024 * MIB },
} as const;

export type UploadType = keyof typeof UPLOAD_TYPES;
export const UPLOAD_TYPE_NAMES = Object.keys(UPLOAD_TYPES) as [UploadType, ...UploadType[]];

/** How long an upload authorization stays usable. */
export const UPLOAD_TTL_SECONDS = 15 * 60;

export const UPLOAD_LABEL_MAX = 60;

/**
 * A label as a safe file-name slug: lowercase ASCII letters, digits and single hyphens, accents
 * folded, at most 60 characters; "creative" when nothing is left. No dot and no slash survive, so
 * no label can leave the account's creatives folder.
 */
export function labelSlug(label: string | undefined): string {
  const slug = (label ?? "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, UPLOAD_LABEL_MAX)
    .replace(/-+$/, "");
  return slug || "creative";
}

const hashToken = (token: string) => createHash("sha256").update(token).digest();

export interface UploadAuthorization {
  asset_url: string;
  upload_url: string;
  token: string;
  path: string;
  content_type: UploadType;
  expires_in: number;
  max_bytes: number;
}

/** POST /creatives/upload-url: a path composed here, in the account's folder, and a single-use token. */
export async function authorizeUpload(
  tx: Sql,
  accountId: string,
  files: ObjectStore,
  params: { contentType: UploadType; label?: string; now: Date },
): Promise<UploadAuthorization> {
  const type = UPLOAD_TYPES[params.contentType];
  const uploadId = randomUUID();
  const path = `creatives/${uploadId}-${labelSlug(params.label)}.${type.extension}`;
  const token = randomBytes(24).toString("base64url");
  const target = files.uploadTarget(accountId, path, { uploadId, token });
  await insertCreativeUpload(tx, accountId, {
    id: uploadId,
    path,
    assetUrl: target.asset_url,
    contentType: params.contentType,
    tokenHash: hashToken(token).toString("hex"),
    expiresAt: new Date(params.now.getTime() + UPLOAD_TTL_SECONDS * 1000),
  });
  return {
    asset_url: target.asset_url,
    upload_url: target.upload_url,
    token,
    path,
    content_type: params.contentType,
    expires_in: UPLOAD_TTL_SECONDS,
    max_bytes: type.maxBytes,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `PUT {site_url}/uploads/<account>/<upload>?token=…`: the bytes of an authorized upload, stored
 * where the authorization said. Refused: an unknown upload or a wrong token (403 `forbidden`), an
 * expired one (403 `link_expired`), one already used (409 `upload_already_used`), another
 * Content-Type than authorized (400), more bytes than the type's cap (413 `payload_too_large`).
 * A PUT that fails midway releases the authorization for another try before it expires.
 */
export function registerUploadRoute(
  app: FastifyInstance,
  deps: { db: Database; files: ObjectStore; clock: () => Date },
): void {
  void app.register(async (scope) => {
    // The body is streamed to the store, never parsed nor held in memory.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
    scope.put<{ Params: { account: string; upload: string }; Querystring: { token?: string } }>(
      "/uploads/:account/:upload",
      async (request) => {
        const { account, upload } = request.params;
        const token = typeof request.query.token === "string" ? request.query.token : "";
        if (!UUID.test(account) || !UUID.test(upload) || token === "") throw new ApiError("forbidden");
        const now = deps.clock();
        const found = await deps.db.tenant(account, (tx) => creativeUpload(tx, account, { id: upload, now }));
        const presented = hashToken(token);
        const expected = found ? Buffer.from(found.token_hash, "hex") : Buffer.alloc(presented.length);
        if (!found || !timingSafeEqual(presented, expected)) throw new ApiError("forbidden");
        if (found.uploaded || found.claimed) throw new ApiError("upload_already_used");
        if (found.expired) throw new ApiError("link_expired");
        const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
        if (contentType !== found.content_type) {
          throw ApiError.validation(`Content-Type must be ${found.content_type}, as authorized`);
        }
        const { maxBytes } = UPLOAD_TYPES[found.content_type as UploadType];
        const declared = Number(request.headers["content-length"] ?? 0);
        if (declared > maxBytes) throw new ApiError("payload_too_large", { max_bytes: maxBytes });

        const claim = (step: "claim" | "release") =>
          deps.db.tenant(account, (tx) =>
            claimCreativeUpload(tx, account, { id: upload, now: deps.clock(), step }),
          );
        if (!(await claim("claim"))) throw new ApiError("upload_already_used");
        let sizeBytes: number;
        try {
          sizeBytes = await deps.files.write(account, found.path, request.raw, { maxBytes });
        } catch (err) {
          await claim("release");
          throw err;
        }
        await deps.db.tenant(account, (tx) =>
          claimCreativeUpload(tx, account, { id: upload, now: deps.clock(), step: "finish", sizeBytes }),
        );
        return {
          data: {
            asset_url: found.asset_url,
            path: found.path,
            content_type: found.content_type,
            size_bytes: sizeBytes,
          },
        };
      },
    );
  });
}
