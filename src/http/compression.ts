import { constants } from "node:zlib";
import compress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

/** Bodies below this many bytes go out as they are: the headers would outweigh the saving. */
export const COMPRESS_THRESHOLD = 1024;

/**
 * Brotli's default quality (11) costs ~40× quality 4's CPU for a few % smaller JSON, on every
 * answer: dynamic JSON is compressed per request, so the levels are chosen for speed. See
 * docs/operations.md "Compression" for the measured ratio and CPU per MB of each level.
 */
export const BROTLI_QUALITY = 4;
export const GZIP_LEVEL = 6;

/**
 * What is worth compressing: JSON (the API, /tools, OpenAPI, MCP), pages, scripts, styles, CSV and
 * plain text. Not `application/octet-stream` (the plugin's default list has it: an upload served
 * at /files would be zipped), nor `text/event-stream`, nor media.
 */
const COMPRESSIBLE =
  /^(?:application\/(?:json|[\w.+-]+\+json|javascript|x-ndjson)|text\/(?:html|css|plain|csv|javascript))\s*(?:;|$)/i;

export function isCompressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType);
}

/** Whether a Vary header value already names Accept-Encoding. */
function variesOnEncoding(vary: unknown): boolean {
  const values = Array.isArray(vary) ? vary : [vary];
  return values.some((v) => typeof v === "string" && /(^|,)\s*accept-encoding\s*(,|$)/i.test(v));
}

/**
 * Responses compressed by `Accept-Encoding` (brotli preferred, then gzip), from 1 KB up, streamed
 * bodies included. Registered before the routes: the plugin attaches its hook to each route as it
 * is added, after the app's own onSend hooks, so the headers those set are kept. Routes that serve
 * a file with its own encoding and validators (a precompressed asset, a byte range) opt out with
 * `compress: false`.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  // Every answer of a compressible type says that its bytes depend on Accept-Encoding, the
  // uncompressed ones too (small, or asked without compression): a cache must not mix them up.
  // Lowercase, as the plugin writes it, so that it does not add a second one.
  // A callback hook (no promise, no microtask): it runs on every answer.
  app.addHook("onSend", (_request, reply, payload, done) => {
    const type = reply.getHeader("content-type");
    if (typeof type === "string" && isCompressible(type) && !variesOnEncoding(reply.getHeader("vary"))) {
      const vary = reply.getHeader("vary");
      reply.header(
        "vary",
        typeof vary === "string" && vary !== "" ? `${vary}, accept-encoding` : "accept-encoding",
      );
    }
    done(null, payload);
  });
  await app.register(compress, {
    threshold: COMPRESS_THRESHOLD,
    // zstd only exists on some Node versions: the same answers on every supported one.
    encodings: ["br", "gzip"],
    customTypes: COMPRESSIBLE,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: GZIP_LEVEL },
    // Request bodies are not decompressed: the body limit counts the bytes received, and a small
    // gzip body can inflate a thousandfold.
    globalDecompression: false,
  });
}
