import { randomUUID } from "node:crypto";
import cors from "@fastify/cors";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import { type AdIndexCache, createAdIndexCache } from "./attribution/ad-index-cache.ts";
import type { KeyStore } from "./auth/key-store.ts";
import { buildIndex } from "./catalog/index-listing.ts";
import { buildOpenApi } from "./catalog/openapi.ts";
import { registerReferencePage } from "./catalog/reference-page.ts";
import { registerToolsRoute } from "./catalog/tools-route.ts";
import { registerCalcomHookRoute } from "./connectors/calcom-route.ts";
import { registerCalendlyHookRoute } from "./connectors/calendly-route.ts";
import { registerStripeHookRoute } from "./connectors/stripe-route.ts";
import { registerUploadRoute } from "./creatives/uploads.ts";
import type { SecretBox } from "./crypto/secret-box.ts";
import type { Database } from "./db/client.ts";
import { observeRequests } from "./http/access-log.ts";
import type { AuditSink } from "./http/audit.ts";
import { boundedClose, CLOSE_GRACE_MS } from "./http/bounded-close.ts";
import { registerCompression } from "./http/compression.ts";
import { ApiError } from "./http/errors.ts";
import { registerHealthRoutes } from "./http/health.ts";
import { type LoadShedding, registerLoadShedding } from "./http/load-shedding.ts";
import { answerConnect, trackRouteMethods } from "./http/method-guard.ts";
import { type Metrics, noMetrics } from "./http/metrics.ts";
import { pipelineHandler, RATE_LIMIT } from "./http/pipeline.ts";
import type { CounterStore } from "./http/rate-limiter.ts";
import type { TrustProxy } from "./http/trust-proxy.ts";
import { registerCollectRoute } from "./ingest/collect-route.ts";
import { type CollectServices, collectServicesFor } from "./ingest/collect-services.ts";
import { registerWebhookRoutes } from "./ingest/webhook-route.ts";
import { registerMcpRoute } from "./mcp/mcp-route.ts";
import { type Mailer, printOnlyMailer } from "./people/mailer.ts";
import { type SessionStore, sessionStoreFor } from "./people/session-store.ts";
import { API_PREFIX, type RouteDef } from "./routes/route-def.ts";
import type { ObjectStore } from "./storage/object-store.ts";
import { registerTestUtmRoute } from "./tracking/test-utm-route.ts";
import { registerTlsAskRoute } from "./tracking/tls-ask-route.ts";
import { registerTrackScriptRoute } from "./tracking/track-script-route.ts";
import { registerWebApp } from "./web/web-app.ts";

export interface AppDeps {
  db: Database;
  secrets: SecretBox;
  keys: KeyStore;
  counters: CounterStore;
  audit: AuditSink;
  logger: Logger;
  routes: readonly RouteDef[];
  /** Recordings and uploads (local files served at /files, or a store that presigns). */
  files: ObjectStore;
  /** The public root address; a function because PORT=0 is known only after listening. */
  siteUrl: () => string;
  clock?: () => Date;
  /** Invitations and password resets (the application's "forgot password"); none: links only printed. */
  mailer?: Mailer;
  /** The application's sessions; by default cached on the embedded database only (sessionStoreFor). */
  sessions?: SessionStore;
  /** `/api/collect`'s limits, account lookup and writer; the production ones for any part not given. */
  collect?: Partial<CollectServices>;
  /** The ad indexes the ingest paths resolve against (beacons, webhooks, vendor hooks); by default the app's own. */
  adIndexes?: AdIndexCache;
  /** The proxies whose X-Forwarded-For names the client (TRUST_PROXY); none: the socket's peer is. */
  trustProxy?: TrustProxy;
  /** Prometheus counters (METRICS_PORT); none: nothing is counted. */
  metrics?: Metrics;
  /** When requests are refused with 503 (LOAD_SHED_*, main.ts); none: never (tests, benches). */
  loadShedding?: LoadShedding;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Resolves once no route handler is running. */
    drain(): Promise<void>;
  }
}

function trustProxyOption(trust: TrustProxy): string[] | ((address: string, hop: number) => boolean) | false {
  if (trust === null) return false;
  // Fastify 5.12 ignores a numeric trustProxy (it cannot check who the nearest peer is); a hop count
  // is still what an operator with one proxy on the same host means, so it is spelled out here.
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  return [...trust];
}

const RATE_LIMIT_HEADER = String(RATE_LIMIT);

/** The Fastify instance with the whole pipeline; reads no environment. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? (() => new Date());
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Fastify's own two lines per request are replaced by one (observeRequests, below).
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1024 * 1024,
    // request.ip (throttles, audit, collect's per-IP limit) is the forwarded client only behind these.
    trustProxy: trustProxyOption(deps.trustProxy ?? null),
  });

  boundedClose(app, CLOSE_GRACE_MS);

  // Before any route: every route registered from here on is known to the 405 answer.
  const methodIndex = trackRouteMethods(app);
  answerConnect(app);
  app.decorateRequest("ascribe");
  const metrics = deps.metrics ?? noMetrics;
  observeRequests(app, metrics);
  // Callback hooks, not async ones: on every request, a promise and a microtask fewer each.
  app.addHook("onRequest", (request, reply, done) => {
    request.ascribe = { rateLimitRemaining: RATE_LIMIT };
    reply.header("X-Request-Id", request.id);
    done();
  });
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("Cache-Control", "private, no-store");
    // Every answer, pages, scripts and files included: a browser never guesses another type.
    reply.header("X-Content-Type-Options", "nosniff");
    reply.header("X-RateLimit-Limit", RATE_LIMIT_HEADER);
    reply.header("X-RateLimit-Remaining", String(request.ascribe.rateLimitRemaining));
    done(null, payload);
  });
  await registerCompression(app);
  await app.register(cors, {
    origin: "*",
    methods: ["GET", "HEAD", "PUT", "POST"],
    // The MCP headers: a browser-based MCP client sends them with every /mcp request.
    allowedHeaders: ["Authorization", "X-Api-Key", "Content-Type", "Mcp-Protocol-Version", "Mcp-Session-Id"],
    exposedHeaders: ["X-RateLimit-Limit", "X-RateLimit-Remaining", "Retry-After", "X-Request-Id"],
    maxAge: 86_400,
  });
  // After CORS: a browser reads the refusal only with its CORS headers.
  if (deps.loadShedding) await registerLoadShedding(app, { shedding: deps.loadShedding, metrics });

  // Bodies are parsed by the pipeline, after authentication: a bad body from an unknown caller is a 401.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      const retryAfter = error.extra.retry_after_seconds;
      if (typeof retryAfter === "number") reply.header("Retry-After", String(retryAfter));
      return reply.status(error.status).send(error.body());
    }
    if (error.statusCode === 413) {
      const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
      return reply.status(400).send(ApiError.validation(`request body exceeds ${limit} bytes`).body());
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(400).send(ApiError.validation(error.message).body());
    }
    // Never echo internals: the detail goes to the log only.
    request.log.error({ err: error, method: request.method, url: request.url }, "request failed");
    return reply.status(502).send(new ApiError("upstream_error").body());
  });

  // A path some route serves, asked with another method (PATCH, TRACE, PROPFIND, CONNECT…), is a
  // 405 naming the methods it has; one no route serves is a 404.
  app.setNotFoundHandler((request, reply) => {
    const route = request.url.split("?")[0] ?? request.url;
    const allowed = methodIndex.refusal(request.method, route);
    if (allowed !== null)
      return reply.status(405).send(new ApiError("method_not_allowed", { allowed }).body());
    return reply.status(404).send(new ApiError("unknown_route", { route }).body());
  });

  // The operator's probes: no key, no rate limit, no tenant data.
  registerHealthRoutes(app, { db: deps.db, counters: deps.counters, logger: app.log });

  // The index and the reference need no key.
  let index: { siteUrl: string; body: { data: ReturnType<typeof buildIndex> } } | null = null;
  app.get(API_PREFIX, async () => {
    const siteUrl = deps.siteUrl();
    if (index?.siteUrl !== siteUrl) index = { siteUrl, body: { data: buildIndex(deps.routes, siteUrl) } };
    return index.body;
  });
  // Built once per site address (known only after listening with PORT=0): it takes tens of ms.
  let openApi: { siteUrl: string; doc: ReturnType<typeof buildOpenApi> } | null = null;
  app.get(`${API_PREFIX}/openapi.json`, async () => {
    const siteUrl = deps.siteUrl();
    if (openApi?.siteUrl !== siteUrl) openApi = { siteUrl, doc: buildOpenApi(deps.routes, siteUrl) };
    return openApi.doc;
  });
  registerReferencePage(app, { siteUrl: deps.siteUrl });

  // Handlers still running: a stop waits for them before it flushes the audit and closes the
  // database (a client that hung up does not end its request's work).
  let running = 0;
  let idle: (() => void)[] = [];
  app.decorate("drain", () => (running === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r))));
  type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  const tracked =
    (handler: Handler): Handler =>
    async (request, reply) => {
      running += 1;
      try {
        return await handler(request, reply);
      } finally {
        running -= 1;
        if (running === 0) {
          for (const resolve of idle) resolve();
          idle = [];
        }
      }
    };

  const pipelineDeps = {
    db: deps.db,
    keys: deps.keys,
    counters: deps.counters,
    audit: deps.audit,
    files: deps.files,
    clock,
  };
  for (const route of deps.routes) {
    const url = API_PREFIX + route.path;
    const handler = tracked(pipelineHandler(route, pipelineDeps));
    // A GET route answers HEAD too (Fastify exposes it); every other method is a 405 (not-found handler).
    app.route({ method: [...route.methods], url, handler });
  }

  // Agents: the /tools manifest and the MCP server, both generated from the same registry.
  const agentDeps = { ...pipelineDeps, routes: deps.routes, siteUrl: deps.siteUrl, tracked };
  registerToolsRoute(app, agentDeps);
  registerMcpRoute(app, agentDeps);

  deps.files.mount(app);
  registerUploadRoute(app, { db: deps.db, files: deps.files, clock });
  const adIndexes = deps.adIndexes ?? createAdIndexCache();
  const hookDeps = { db: deps.db, secrets: deps.secrets, counters: deps.counters, clock, adIndexes };
  registerWebhookRoutes(app, hookDeps);
  registerStripeHookRoute(app, hookDeps);
  registerCalendlyHookRoute(app, hookDeps);
  registerCalcomHookRoute(app, hookDeps);
  const collect = collectServicesFor(deps.db, deps.collect, adIndexes);
  registerCollectRoute(app, { ...collect, counters: deps.counters, clock, metrics });
  registerTestUtmRoute(app, { accounts: collect.accounts, counters: deps.counters });
  registerTrackScriptRoute(app);
  registerTlsAskRoute(app, { accounts: collect.accounts });
  await registerWebApp(app, {
    db: deps.db,
    secrets: deps.secrets,
    counters: deps.counters,
    mailer: deps.mailer ?? printOnlyMailer,
    sessions: deps.sessions ?? sessionStoreFor(deps.db),
    files: deps.files,
    siteUrl: deps.siteUrl,
    clock,
  });

  return app;
}
