import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { type StaticAsset, sendStaticAsset } from "../http/static-asset.ts";

const require = createRequire(import.meta.url);
const here = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

/**
 * The application's static files, read once at start from this folder and from node_modules
 * (nothing is loaded from elsewhere: the pages work offline). Their URLs carry a hash of the
 * bytes, so they are cached for a year and a release changes the URL.
 */
const SOURCES: Record<string, { file: string; type: string }> = {
  "app.css": { file: here("app.css"), type: "text/css; charset=utf-8" },
  "app.js": {
    file: here("app.js"),
    type: "application/javascript; charset=utf-8",
  },
  "chart.js": {
    file: here("chart.js"),
    type: "application/javascript; charset=utf-8",
  },
  "uplot.js": {
    file: require.resolve("uplot/dist/uPlot.iife.min.js"),
    type: "application/javascript; charset=utf-8",
  },
  "uplot.css": { file: require.resolve("uplot/dist/uPlot.min.css"), type: "text/css; charset=utf-8" },
};

interface Asset extends StaticAsset {
  type: string;
  hash: string;
}

const assets = new Map<string, Asset>();
for (const [name, { file, type }] of Object.entries(SOURCES)) {
  const body = readFileSync(file);
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  assets.set(name, { body, gzip: gzipSync(body, { level: 9 }), etag: `"${hash}"`, type, hash });
}

/** The URL of an asset, with its content hash. */
export function assetPath(name: string): string {
  const asset = assets.get(name);
  if (!asset) throw new Error(`unknown asset ${name}`);
  return `/assets/${asset.hash}/${name}`;
}

/** Gzip bytes of the named assets (the pages' first-load budget is counted with these). */
export function assetGzipBytes(name: string): number {
  return assets.get(name)?.gzip.length ?? 0;
}

export function registerAssets(app: FastifyInstance): void {
  app.get<{ Params: { hash: string; name: string } }>(
    "/assets/:hash/:name",
    {
      // Served precompressed (sendStaticAsset), each encoding with its own ETag.
      compress: false,
      onSend: async (_request, reply, payload) => {
        if (reply.statusCode < 400) reply.header("Cache-Control", "public, max-age=31536000, immutable");
        return payload;
      },
    },
    async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return reply.status(404).type("text/plain").send("not found");
      return sendStaticAsset(request, reply, asset, asset.type);
    },
  );
}
