import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { type StaticAsset, sendStaticAsset } from "../http/static-asset.ts";
import { API_PREFIX } from "../routes/route-def.ts";
import { REFERENCE_PATH } from "./index-listing.ts";

const gzipAsync = promisify(gzipCallback);

/** Scalar's browser bundle: the whole reference in one script, nothing fetched from a CDN. */
const SCRIPT_MODULE = "@scalar/api-reference/browser/standalone.js";

/** The bundle's name carries its content hash: a new version is a new address, so it may be kept a year. */
const ASSET_CACHE = "public, max-age=31536000, immutable";
/** The page names the current bundle: browsers ask again each time (cheap, it is small). */
const PAGE_CACHE = "no-cache";

/**
 * Scalar's options. Offline and private by default: no web fonts from its CDN, no AI agent (it
 * talks to Scalar's servers, and turns itself on for localhost), no link to its hosted client; the
 * curl sample first, the bearer scheme preselected for "try it".
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  agent: { disabled: true },
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: "never",
  documentDownloadType: "json",
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  authentication: { preferredSecurityScheme: "bearer" },
  metaData: { title: "Ascribe API reference" },
};

/**
 * The page's Content-Security-Policy. The page holds no inline script (Scalar reads its options
 * from the data attributes of an empty script element) and loads one script, from this origin; it
 * reads the OpenAPI document and sends "try it" requests to this origin only. Scalar's components
 * put their styles in `<style>` elements and `style` attributes they create at run time, which a
 * nonce or hash cannot name, hence styles' 'unsafe-inline' (styles cannot run code). Fonts and
 * images: its bundle's own `data:` URIs. Checked in Chromium (test/catalog/reference-browser.test.ts):
 * the reference renders and no directive is violated.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

interface ScriptAsset extends StaticAsset {
  name: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page: Scalar's script, pointed at our own OpenAPI document, both from this origin. */
export function referencePage(sitePath: string, scriptName: string): string {
  const documentUrl = `${sitePath}${API_PREFIX}/openapi.json`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ascribe API reference</title>
</head>
<body>
<noscript>This reference needs JavaScript. The OpenAPI document is at <a href="${escapeHtml(documentUrl)}">${escapeHtml(documentUrl)}</a>.</noscript>
<script id="api-reference" data-url="${escapeHtml(documentUrl)}" data-configuration="${escapeHtml(JSON.stringify(SCALAR_CONFIGURATION))}"></script>
<script src="${escapeHtml(`${sitePath}${REFERENCE_PATH}/assets/${scriptName}`)}"></script>
</body>
</html>
`;
}

async function loadScript(): Promise<ScriptAsset> {
  const path = createRequire(import.meta.url).resolve(SCRIPT_MODULE);
  const body = await readFile(path);
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 16);
  return { name: `api-reference.${hash}.js`, body, gzip: await gzipAsync(body), etag: `"${hash}"` };
}

/**
 * `GET {site_url}/docs`: the interactive API reference (Scalar, served from its npm package so the
 * page works offline), reading `{base_url}/openapi.json`; its script at `/docs/assets/…`. The bundle
 * (3.5 MB, 1 MB gzipped) is read and compressed on the first visit, not at start-up.
 */
export function registerReferencePage(
  app: FastifyInstance,
  deps: { siteUrl: () => string; script?: () => Promise<ScriptAsset> },
): void {
  let loading: Promise<ScriptAsset> | null = null;
  const script = () => {
    // A failed read is tried again on the next visit rather than remembered.
    loading ??= (deps.script ?? loadScript)().catch((err: unknown) => {
      loading = null;
      throw err;
    });
    return loading;
  };

  app.get(
    REFERENCE_PATH,
    {
      // Route-level hooks run after the app's, which marks every answer private and uncacheable.
      onSend: async (_request, reply, payload) => {
        reply.header("Cache-Control", PAGE_CACHE);
        reply.header("Content-Security-Policy", REFERENCE_CSP);
        return payload;
      },
    },
    async (_request, reply) => {
      const { name } = await script();
      const sitePath = new URL(deps.siteUrl()).pathname.replace(/\/+$/, "");
      return reply.type("text/html; charset=utf-8").send(referencePage(sitePath, name));
    },
  );

  app.get<{ Params: { file: string } }>(
    `${REFERENCE_PATH}/assets/:file`,
    {
      // Served precompressed (sendStaticAsset), each encoding with its own ETag.
      compress: false,
      onSend: async (_request, reply, payload) => {
        if (reply.statusCode === 200 || reply.statusCode === 304) reply.header("Cache-Control", ASSET_CACHE);
        return payload;
      },
    },
    async (request, reply) => {
      const asset = await script();
      if (request.params.file !== asset.name) return reply.callNotFound();
      reply.header("X-Content-Type-Options", "nosniff");
      return sendStaticAsset(request, reply, asset, "text/javascript; charset=utf-8");
    },
  );
}
