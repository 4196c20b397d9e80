import type { FastifyInstance } from "fastify";
import { sendStaticAsset } from "../http/static-asset.ts";
import { type TrackScript, trackScript } from "./track-script.ts";

export const TRACK_SCRIPT_PATH = "/api/track.js";
/** An hour: a release reaches pages within the hour, and the ETag makes the check after it cheap. */
export const TRACK_SCRIPT_CACHE = "public, max-age=3600";

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
      // Served precompressed (sendStaticAsset), each encoding with its own ETag.
      compress: false,
      // Route-level hooks run after the app's, which marks every answer private and uncacheable.
      onSend: async (_request, reply, payload) => {
        reply.header("Cache-Control", TRACK_SCRIPT_CACHE);
        return payload;
      },
    },
    async (request, reply) => {
      const { code, gzip, etag } = await built;
      return sendStaticAsset(
        request,
        reply,
        { body: code, gzip, etag },
        "application/javascript; charset=utf-8",
      );
    },
  );
}
