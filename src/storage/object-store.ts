import send from "@fastify/send";
import type { FastifyInstance } from "fastify";

/** How long a signed file URL stays valid (SPEC, Limits: recording URL validity). */
export const SIGNED_URL_TTL_SECONDS = 3600;

export interface SignedUrlOptions {
  /** The media type the URL is served with (it is part of what is signed). */
  contentType: string;
  expiresIn: number;
  now: Date;
}

/**
 * Where recordings and uploads live, one folder per account. The API never returns a file: it hands
 * out expiring signed URLs. Local files under DATA_DIR are served by the service itself
 * (local-store.ts); an S3-compatible store would presign instead and mount nothing.
 */
/** Where a client sends an authorized upload, and the address the stored asset will have. */
export interface UploadTarget {
  /** `PUT` the bytes here, with the authorized Content-Type, before the authorization expires. */
  upload_url: string;
  /** The asset's permanent address (what an import names); its file is served by signed URLs only. */
  asset_url: string;
}

export interface ObjectStore {
  /** Writes (or replaces) a file in the account's folder. */
  put(accountId: string, path: string, body: Buffer): Promise<void>;
  /**
   * Streams a file into the account's folder, refusing it (nothing is kept) past `maxBytes`;
   * resolves to its size.
   */
  write(
    accountId: string,
    path: string,
    source: AsyncIterable<Buffer>,
    options: { maxBytes: number },
  ): Promise<number>;
  /**
   * The URLs of an upload authorization. The local store receives the PUT itself (the service
   * checks the single-use token, type and size); an S3-compatible store would presign a PUT.
   */
  uploadTarget(accountId: string, path: string, options: { uploadId: string; token: string }): UploadTarget;
  exists(accountId: string, path: string): Promise<boolean>;
  /** A URL that fetches the file (with range requests) without a key until it expires. */
  signedUrl(accountId: string, path: string, options: SignedUrlOptions): Promise<string>;
  /** Mounts what serving signed URLs needs on the app. */
  mount(app: FastifyInstance): void;
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * A path inside an account's folder: `/`-separated segments of letters, digits, `.`, `_` and `-`,
 * none starting with a dot (no `..`, no hidden files), at most 512 characters.
 */
export function isObjectPath(path: string): boolean {
  return path.length > 0 && path.length <= 512 && path.split("/").every((segment) => SEGMENT.test(segment));
}

/** The media type a file's extension names, else `fallback`. */
export function mediaTypeOf(path: string, fallback: string): string {
  return send.mime.getType(path) ?? fallback;
}

export function assertObjectPath(path: string): void {
  if (!isObjectPath(path)) throw new Error(`not a valid object path: ${JSON.stringify(path.slice(0, 80))}`);
}
