import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Metrics } from "./metrics.ts";

/** Requests Fastify matched no route for: one label, whatever the URL (a scan would explode it). */
export const UNMATCHED_ROUTE = "(unmatched)";

/** The matched route's pattern (`/api/v1/contacts/journey`, `/files/*`), never the URL itself. */
export function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? UNMATCHED_ROUTE;
}

/**
 * One access-log line per answered request, at info, and the request metrics. The line carries the
 * route pattern rather than the URL (query strings hold emails) and the key's 8-character display
 * prefix rather than the key; the request id comes from the request's logger (`reqId`).
 */
export function observeRequests(app: FastifyInstance, metrics: Metrics): void {
  // A callback hook: no promise and no microtask on every request.
  app.addHook("onResponse", (request, reply, done) => {
    const route = routePattern(request);
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const keyPrefix = request.ascribe?.keyPrefix;
    request.log.info(
      {
        method: request.method,
        route,
        status: reply.statusCode,
        ms,
        ...(keyPrefix ? { key_prefix: keyPrefix } : {}),
      },
      "request",
    );
    metrics.request({ method: request.method, route, status: reply.statusCode, seconds: ms / 1000 });
    done();
  });
}
