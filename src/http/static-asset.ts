import type { FastifyReply, FastifyRequest } from "fastify";

/** A file served from memory: its bytes, their gzip and a strong ETag of the bytes. */
export interface StaticAsset {
  body: string | Buffer;
  gzip: Buffer;
  etag: string;
}

/** Whether an If-None-Match header names one of these ETags (weak comparison, as RFC 9110 asks). */
function matches(header: string | undefined, etags: readonly string[]): boolean {
  return (header ?? "").split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || etags.includes(t.replace(/^W\//, ""));
  });
}

/**
 * Answers `asset` as `type`: gzip when the client accepts it (another representation, so its own
 * ETag), 304 when the client holds either. Caching headers are the route's.
 */
export function sendStaticAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  asset: StaticAsset,
  type: string,
) {
  const gzipEtag = asset.etag.replace(/"$/, '-gzip"');
  const zipped = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "");
  reply.header("ETag", zipped ? gzipEtag : asset.etag).header("Vary", "Accept-Encoding");
  if (matches(request.headers["if-none-match"], [asset.etag, gzipEtag])) return reply.status(304).send();
  reply.type(type);
  return zipped ? reply.header("Content-Encoding", "gzip").send(asset.gzip) : reply.send(asset.body);
}
