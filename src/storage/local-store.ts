import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import send from "@fastify/send";
import type { FastifyInstance } from "fastify";
import type { SecretBox } from "../crypto/secret-box.ts";
import { ApiError } from "../http/errors.ts";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./data-dir.ts";
import { assertObjectPath, isObjectPath, type ObjectStore } from "./object-store.ts";

const PURPOSE = "file-url";
const ACCOUNT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface LocalObjectStoreOptions {
  /** The folder holding one sub-folder per account (DATA_DIR/files). */
  root: string;
  /** Signs and checks the URLs (a key derived from the secrets keyring, shared by instances). */
  secrets: SecretBox;
  siteUrl: () => string;
  clock?: () => Date;
}

/** What a URL's signature covers: the file, the instant it expires and the type it is served as. */
const signedMessage = (file: string, expires: number, contentType: string) =>
  `GET /files/${file}\n${expires}\n${contentType}`;

/**
 * Files under DATA_DIR, served by the service at `GET /files/<account>/<path>?expires&type&signature`
 * with range requests (audio players seek), conditional GETs and HEAD. A URL is refused (403) when
 * its signature does not match — another file, another account, another type, or any edit — or
 * once it has expired. Folders are created 0700 and files 0600 whatever the umask (a recording read
 * straight from the disk would bypass the signature).
 */
export function createLocalObjectStore(options: LocalObjectStoreOptions): ObjectStore {
  const clock = options.clock ?? (() => new Date());
  const fileOf = (accountId: string, path: string) => {
    if (!ACCOUNT_ID.test(accountId)) throw new Error("not an account id");
    assertObjectPath(path);
    return `${accountId}/${path}`;
  };

  return {
    async put(accountId, path, body) {
      const target = join(options.root, fileOf(accountId, path));
      await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      // Written aside, then renamed: a reader never sees half a file.
      const partial = `${target}.${randomUUID()}.partial`;
      await writeFile(partial, body, { mode: PRIVATE_FILE_MODE });
      await rename(partial, target);
    },

    async write(accountId, path, source, { maxBytes }) {
      const target = join(options.root, fileOf(accountId, path));
      await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      const partial = `${target}.${randomUUID()}.partial`;
      let size = 0;
      const capped = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > maxBytes) done(new ApiError("payload_too_large", { max_bytes: maxBytes }));
          else done(null, chunk);
        },
      });
      try {
        await pipeline(source, capped, createWriteStream(partial, { mode: PRIVATE_FILE_MODE }));
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      }
      await rename(partial, target);
      return size;
    },

    uploadTarget(accountId, path, { uploadId, token }) {
      const file = fileOf(accountId, path);
      return {
        upload_url: `${options.siteUrl()}/uploads/${accountId}/${uploadId}?${new URLSearchParams({ token })}`,
        asset_url: `${options.siteUrl()}/files/${file}`,
      };
    },

    async exists(accountId, path) {
      if (!ACCOUNT_ID.test(accountId) || !isObjectPath(path)) return false;
      const found = await stat(join(options.root, fileOf(accountId, path))).catch(() => null);
      return found?.isFile() ?? false;
    },

    async signedUrl(accountId, path, { contentType, expiresIn, now }) {
      const file = fileOf(accountId, path);
      const expires = Math.floor(now.getTime() / 1000) + expiresIn;
      const signature = options.secrets.sign(PURPOSE, signedMessage(file, expires, contentType));
      const query = new URLSearchParams({ expires: String(expires), type: contentType, signature });
      return `${options.siteUrl()}/files/${file}?${query}`;
    },

    mount(app) {
      mountFileRoute(app, options.root, options.secrets, clock);
    },
  };
}

function mountFileRoute(app: FastifyInstance, root: string, secrets: SecretBox, clock: () => Date) {
  app.get<{ Params: { "*": string }; Querystring: Record<string, string | undefined> }>(
    "/files/*",
    // Files as stored, with their ETag and byte ranges: never re-encoded on the way out.
    { compress: false },
    async (request, reply) => {
      const file = request.params["*"];
      const slash = file.indexOf("/");
      const { expires: expiresText = "", type = "", signature = "" } = request.query;
      const expires = /^\d{1,12}$/.test(expiresText) ? Number(expiresText) : Number.NaN;
      const wellFormed =
        ACCOUNT_ID.test(file.slice(0, slash)) &&
        isObjectPath(file.slice(slash + 1)) &&
        !Number.isNaN(expires);
      if (!wellFormed || !secrets.verify(PURPOSE, signedMessage(file, expires, type), signature)) {
        throw new ApiError("forbidden");
      }
      if (expires * 1000 <= clock().getTime()) throw new ApiError("link_expired");

      const sent = await send(request.raw, `/${file}`, {
        root,
        contentType: false,
        cacheControl: false,
        dotfiles: "deny",
        index: false,
      });
      if (sent.type === "error") {
        sent.stream.destroy();
        if (sent.statusCode === 416) {
          reply.header("Content-Range", sent.headers["Content-Range"]);
          throw new ApiError("range_not_satisfiable");
        }
        if (sent.statusCode === 412) throw new ApiError("precondition_failed");
        throw new ApiError("not_found");
      }
      return reply
        .code(sent.statusCode)
        .headers(sent.headers)
        .header("Content-Type", type)
        .header("Content-Disposition", "inline")
        .header("X-Content-Type-Options", "nosniff")
        .send(sent.stream);
    },
  );
}
