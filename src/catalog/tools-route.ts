import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type KeyedDeps, keyedHandler } from "../http/pipeline.ts";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";
import { buildToolManifest } from "./tools.ts";

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface ToolsRouteDeps extends KeyedDeps {
  routes: readonly RouteDef[];
  siteUrl: () => string;
  /** The app's in-flight tracking (a stop waits for running handlers). */
  tracked: (handler: Handler) => Handler;
}

/**
 * `GET {base_url}/tools`: any valid key, through the pipeline's key steps (plan, rate limit, audit);
 * the manifest lists only what the key's scopes cover. It holds no account data, so it skips the
 * barrier and redaction, like the index.
 */
export function registerToolsRoute(app: FastifyInstance, deps: ToolsRouteDeps): void {
  const url = `${API_PREFIX}/tools`;
  app.get(
    url,
    deps.tracked(
      keyedHandler(deps, { scope: null }, async ({ record }) => ({
        data: buildToolManifest(deps.routes, record.scopes, deps.siteUrl()),
      })),
    ),
  );
}
