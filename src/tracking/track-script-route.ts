import type { FastifyInstance } from "fastify";
import { type TrackScript, trackScript } from "./track-script.ts";

export const TRACK_SCRIPT_PATH = "/api/track.js";
/** An hour: a release reaches pages within the hour, and the ETag makes the check after it cheap. */
export const TRACK_SCRIPT_CACHE = "public, max-age=3600";

/** Whether an If-None-Match header names one of these ETags (weak comparison, as RFC 9110 asks). */
function matches(header: string | undefined, etags: readonly string[]): boolean {
  return (header ?? "").split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || etags.includes(t.replace(/^W\//, ""));
  });
}

/**
 * `GET {site_url}/api/track.js` (SPEC "Tracking script and test endpoint"; CONTRACT): the tracking
 * script, built once per process when the route is registered and served from memory, gzip when the
 * client accepts it (its own ETag: another representation). A first-party tracking host serves the
 * same script at the same path: the script derives its endpoint from its own address.
 */
export function registerTrackScriptRoute(
  app: FastifyInstance,
  script: () => Promise<TrackScript> = trackScript,
): void {
  const built = script();
  // A failed build answers each request with the error; it must not end the process meanwhile.
  built.catch(() => {});

  app.get(
    TRACK_SCRIPT_PATH,
    {
      // Route-level hooks run after the app's, which marks every answer private and uncacheable.
      onSend: async (_request, reply, payload) => {
        reply.header("Cache-Control", TRACK_SCRIPT_CACHE);
        return payload;
      },
    },
    async (request, reply) => {
      const { code, gzip, etag } = await built;
      const gzipEtag = etag.replace(/"$/, '-gzip"');
      const zipped = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "");
      reply.header("ETag", zipped ? gzipEtag : etag).header("Vary", "Accept-Encoding");
      if (matches(request.headers["if-none-match"], [etag, gzipEtag])) return reply.status(304).send();
      reply.type("application/javascript; charset=utf-8");
      return zipped ? reply.header("Content-Encoding", "gzip").send(gzip) : reply.send(code);
    },
  );
}
