import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { displayPrefix, hashApiKey, isWellFormedApiKey } from "../auth/api-key.ts";
import type { KeyStore } from "../auth/key-store.ts";
import { grants, type Scope } from "../auth/scopes.ts";
import type { Database } from "../db/client.ts";
import type { KeyRecord } from "../queries/find-key-by-hash.ts";
import { InlineError, type RouteDef, type Tenant } from "../routes/route-def.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { AuditSink } from "./audit.ts";
import { assertSingleTenant } from "./barrier.ts";
import { ApiError } from "./errors.ts";
import { failedAuthThrottle } from "./failed-auth.ts";
import { readJsonBody } from "./json-body.ts";
import type { CounterStore } from "./rate-limiter.ts";
import { redact } from "./redact.ts";

export const RATE_LIMIT = 600;
export { FAILED_AUTH_LIMIT } from "./failed-auth.ts";

const WINDOW_MS = 60_000;
const RETRY_AFTER_SECONDS = 60;

export interface PipelineDeps {
  db: Database;
  keys: KeyStore;
  counters: CounterStore;
  audit: AuditSink;
  files: ObjectStore;
  clock: () => Date;
}

/** Per-request state the response hooks read (rate-limit headers). */
export interface RequestState {
  rateLimitRemaining: number;
  /** The valid key's 8-character display prefix, for the access log (never the key). */
  keyPrefix?: string;
}

declare module "fastify" {
  interface FastifyRequest {
    ascribe: RequestState;
  }
}

/** `Authorization: Bearer` is read first; `x-api-key` only when there is no Authorization header. */
export function presentedKey(headers: FastifyRequest["headers"]): string | null {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? null;
  }
  const apiKey = headers["x-api-key"];
  return typeof apiKey === "string" ? apiKey.trim() : null;
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === "number") return `${acc}[${part}]`;
    return acc ? `${acc}.${String(part)}` : String(part);
  }, "");
}

/** A zod failure as one message naming each offending parameter. */
export function validationMessage(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const at = issuePath(issue.path);
      return at ? `${at}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

function readInput(route: RouteDef, request: FastifyRequest): unknown {
  if (request.method === "GET" || request.method === "HEAD") return request.query ?? {};
  const raw = request.body;
  if (raw === undefined || raw === null || raw === "") return {};
  const contentType = request.headers["content-type"] ?? "";
  if (!/^application\/json\b/i.test(contentType)) {
    throw ApiError.validation("Content-Type must be application/json");
  }
  const json = readJsonBody(String(raw));
  if (!json.ok) throw json.error;
  const body = json.value;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    if (route.required) throw ApiError.validation(route.required.error);
    throw ApiError.validation("body must be a JSON object");
  }
  return body;
}

function validate(route: RouteDef, request: FastifyRequest): unknown {
  const input = readInput(route, request);
  if (route.required) {
    const value = (input as Record<string, unknown>)[route.required.field];
    if (value === undefined || value === null) throw ApiError.validation(route.required.error);
  }
  const parsed = route.input.safeParse(input);
  if (!parsed.success) {
    // The required member of the wrong kind is the spec's own "missing …" case; one malformed, too
    // long or holding an unknown key gets the message that says so (unless `wholeValue`).
    const field = route.required?.field;
    const atField = parsed.error.issues.some(
      (i) =>
        i.path[0] === field &&
        (route.required?.wholeValue || (i.path.length === 1 && i.code === "invalid_type")),
    );
    if (route.required && atField) throw ApiError.validation(route.required.error);
    throw ApiError.validation(validationMessage(parsed.error));
  }
  return parsed.data;
}

/** What the key steps of the pipeline need (the tenant's database is the handler's business). */
export type KeyedDeps = Pick<PipelineDeps, "keys" | "counters" | "audit" | "clock">;

export interface KeyedOptions {
  /** The scope the request needs; null when any valid key will do (/tools, /mcp). */
  scope: Scope | null;
  /**
   * True for a request that may hand its work to a registry route run through this same pipeline
   * (an MCP tool call): that route counts it against the rate limit and audits it, so it is not
   * counted up front here. If it is not handed off after all, it is counted and audited afterwards.
   */
  mayHandOff?: (request: FastifyRequest) => boolean;
}

export interface KeyedContext {
  record: KeyRecord;
  now: Date;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Tells the pipeline the work went to a route that counted and audited it. */
  handedOff(): void;
}

/**
 * The key steps of DESIGN §5, after routing: failed-auth gate → key → plan → rate limit → scope, then
 * `run`; every authenticated request is audited, whatever its outcome.
 */
export function keyedHandler(
  deps: KeyedDeps,
  options: KeyedOptions,
  run: (ctx: KeyedContext) => Promise<unknown>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const ip = request.ip;
    const failedAuth = failedAuthThrottle(deps.counters, ip);
    await failedAuth.gate(reply);

    const now = deps.clock();
    const key = presentedKey(request.headers);
    const hash = key !== null && isWellFormedApiKey(key) ? hashApiKey(key) : null;
    const record = hash === null ? null : await deps.keys.find(hash);
    if (
      record === null ||
      record.revoked_at !== null ||
      (record.expires_at !== null && record.expires_at.getTime() <= now.getTime())
    ) {
      throw await failedAuth.fail(reply, new ApiError("invalid_or_missing_api_key"));
    }
    if (key !== null) request.ascribe.keyPrefix = displayPrefix(key);
    // From here the request is authenticated: whatever its outcome, it is audited. The entry is
    // recorded before the answer leaves, so a stop that waits for handlers loses none.
    const deferred = options.mayHandOff?.(request) ?? false;
    let handedOff = false;
    let pastPlan = false;
    let status = 200;
    try {
      if (record.plan === "free") throw new ApiError("plan_free_no_api");
      pastPlan = true;

      if (!deferred) {
        const used = await deps.counters.hit(`rate:${record.key_id}`, WINDOW_MS);
        request.ascribe.rateLimitRemaining = Math.max(0, RATE_LIMIT - used.count);
        if (used.count > RATE_LIMIT) {
          reply.header("Retry-After", String(RETRY_AFTER_SECONDS));
          throw new ApiError("rate_limited", { retry_after_seconds: RETRY_AFTER_SECONDS });
        }
      }

      if (options.scope !== null && !grants(record.scopes, options.scope))
        throw new ApiError("insufficient_scope", { required: options.scope });

      const result = await run({
        record,
        now,
        request,
        reply,
        handedOff: () => {
          handedOff = true;
        },
      });
      status = reply.statusCode;
      return result;
    } catch (err) {
      status = err instanceof ApiError ? err.status : 502;
      throw err;
    } finally {
      if (!handedOff) {
        // A deferred request the route never took still costs one request of the window.
        if (deferred && pastPlan) {
          const used = await deps.counters.hit(`rate:${record.key_id}`, WINDOW_MS);
          request.ascribe.rateLimitRemaining = Math.max(0, RATE_LIMIT - used.count);
        }
        deps.audit.record(record.account_id, {
          key_id: record.key_id,
          method: request.method,
          path: request.url.split("?")[0] ?? request.url,
          scope: options.scope ?? "",
          status,
          ip,
          occurred_at: deps.clock().toISOString(),
        });
      }
    }
  };
}

/**
 * The request pipeline of a registry route: the key steps (above) → validation → handler (tenant
 * transaction) → barrier → redaction → envelope.
 */
export function pipelineHandler(route: RouteDef, deps: PipelineDeps) {
  return keyedHandler(deps, { scope: route.scope }, async ({ record, now, request }) => {
    const input = validate(route, request);
    const tenant: Tenant = {
      accountId: record.account_id,
      plan: record.plan,
      timezone: record.timezone,
      currency: record.currency,
    };
    const data = await deps.db.tenant(tenant.accountId, (tx) =>
      route.handler({ tx, tenant, input, now, files: deps.files }),
    );
    assertSingleTenant(data, tenant.accountId);
    if (data instanceof InlineError) {
      const body = redact(data.body, route.redactFragments) as Record<string, unknown>;
      return { ...body, data: body };
    }
    return { data: redact(data, route.redactFragments) };
  });
}
