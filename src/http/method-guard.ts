import { ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import Router from "find-my-way";

/**
 * Which methods a path is served with, from every route registered on the app (API, pages,
 * /files, /mcp, …), so a method none of them serves is a 405 naming the others instead of a 404:
 * TRACE, PROPFIND, SEARCH and the like reach Fastify's not-found handler, which asks here.
 * A second router, Fastify's own (find-my-way), matches the path exactly as routing did.
 */
export interface MethodIndex {
  /**
   * When `path` has routes but none for `method`: the methods it has (HEAD implied by GET, OPTIONS
   * by CORS, both left out). Null when no route has the path, or when one serves `method` and
   * its handler itself answered "not found" (an unknown asset name).
   */
  refusal(method: string, path: string): readonly string[] | null;
}

// Every route is filed under one method of this router: the store holds the methods really served.
const FILED_AS = "GET";
const noop = () => undefined;

/** Records routes from now on (call it before any route is registered). */
export function trackRouteMethods(app: FastifyInstance): MethodIndex {
  const router = Router({ ignoreTrailingSlash: true });
  const byUrl = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    // The CORS preflight route is `OPTIONS *`: every path answers it, none is made known by it.
    const methods = [route.method].flat().filter((m) => m !== "OPTIONS");
    if (methods.length === 0) return;
    let served = byUrl.get(route.url);
    if (served === undefined) {
      served = new Set();
      byUrl.set(route.url, served);
      router.on(FILED_AS, route.url, noop, served);
    }
    for (const method of methods) served.add(method);
  });
  return {
    refusal(method, path) {
      const found = router.find(FILED_AS, path);
      if (found === null) return null;
      const served = found.store as Set<string>;
      if (served.has(method) || (method === "HEAD" && served.has("GET"))) return null;
      return [...served].filter((m) => m !== "HEAD" || !served.has("GET"));
    },
  };
}

/**
 * Node hands a CONNECT request to the server's `connect` event, not to the request handler, and
 * closes the socket when nobody listens: the client gets no answer at all. Routed like any other
 * request instead, it gets the same 405 (known path) or 404 as every other method, with the usual
 * headers, and the connection is closed after it.
 */
export function answerConnect(app: FastifyInstance): void {
  app.server.on("connect", (request, socket) => {
    if (!(socket instanceof Socket)) return socket.destroy();
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    response.on("finish", () => socket.end());
    app.routing(request, response);
  });
}
