import cookie from "@fastify/cookie";
import type { FastifyInstance } from "fastify";
import { registerApiKeysRoutes } from "./api-keys-routes.tsx";
import { registerAssets } from "./assets.ts";
import { registerConnectionsRoutes } from "./connections-routes.tsx";
import { reportPages } from "./pages/index.ts";
import { registerReportPage } from "./report-page.tsx";
import { serverErrorPage } from "./send-page.tsx";
import { registerSettingsRoutes } from "./settings-routes.tsx";
import { registerSignInRoutes } from "./sign-in-routes.tsx";
import { registerTrackingSettings } from "./tracking-settings.tsx";
import type { WebDeps } from "./web-deps.ts";
import { loadWebState } from "./web-request.ts";

export interface WebRoute {
  method: string;
  url: string;
}

declare module "fastify" {
  interface FastifyInstance {
    webRoutes: readonly WebRoute[];
  }
}

/**
 * What the pages allow: everything from this origin only, no inline script, no framing, forms
 * posted here only. The chart's data sits in a JSON script block, which is not executed.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The application at `{site_url}/`: sign-in, settings and reports, server-rendered, in a plugin of
 * its own so its cookies, headers and HTML errors never touch the API's routes.
 */
export async function registerWebApp(app: FastifyInstance, deps: WebDeps): Promise<void> {
  // The application's routes as registered, for the page security suite to walk every one of them.
  const routes: WebRoute[] = [];
  app.decorate("webRoutes", routes);
  await app.register(async (web) => {
    web.addHook("onRoute", (route) => {
      for (const method of [route.method].flat())
        if (method !== "HEAD") routes.push({ method, url: route.url });
    });
    await web.register(cookie);
    web.decorateRequest("web");
    web.addHook("onRequest", async (request) => {
      if (!request.url.startsWith("/assets/")) await loadWebState(deps, request);
    });
    web.addHook("onSend", async (_request, reply, payload) => {
      reply.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
      reply.header("X-Content-Type-Options", "nosniff");
      reply.header("X-Frame-Options", "DENY");
      // One-time links carry their token in the path: no page tells another site where it came from.
      reply.header("Referrer-Policy", "no-referrer");
      return payload;
    });
    web.setErrorHandler((error, request, reply) => {
      request.log.error({ err: error, method: request.method, url: request.url }, "page failed");
      return serverErrorPage(reply);
    });
    registerAssets(web);
    registerSignInRoutes(web, deps);
    registerApiKeysRoutes(web, deps);
    registerSettingsRoutes(web, deps);
    registerTrackingSettings(web, deps);
    registerConnectionsRoutes(web, deps);
    for (const page of reportPages) registerReportPage(web, deps, page);
  });
}
