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
import { streamedList } from "./stream-rows.ts";

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

/** The request's input as the route's schema reads it: the query of a GET, else the JSON body. */
function readInput(request: FastifyRequest): unknown {
  if (request.method === "GET" || request.method === "HEAD") return request.query ?? {};
  const raw = request.body;
  if (raw === undefined || raw === null || raw === "") return {};
  const contentType = request.headers["content-type"] ?? "";
  if (!/^application\/json\b/i.test(contentType)) {
    throw ApiError.validation("Content-Type must be application/json");
  }
  const json = readJsonBody(String(raw));
  if (!json.ok) throw json.error;
  return json.value;
}

/** Checks an input (query object or JSON body) against the route's schema; 400 names the fault. */
export function validateInput(route: RouteDef, input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    if (route.required) throw ApiError.validation(route.required.error);
    throw ApiError.validation("body must be a JSON object");
  }
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

/**
 * Failed-auth gate → key (DESIGN §5): the valid, unrevoked, unexpired key the request presents, or
 * 401 (counted against the caller's address).
 */
export async function authenticate(
  deps: KeyedDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<KeyRecord> {
  const failedAuth = failedAuthThrottle(deps.counters, request.ip);
  await failedAuth.gate(reply);
  const now = deps.clock();
  const key = presentedKey(request.headers);
  const hash = key !== null && isWellFormedApiKey(key) ? hashApiKey(key) : null;
  const record = hash === null ? null : await deps.keys.find(hash);
  if (
    key === null ||
    record === null ||
    record.revoked_at !== null ||
    (record.expires_at !== null && record.expires_at.getTime() <= now.getTime())
  ) {
    throw await failedAuth.fail(reply, new ApiError("invalid_or_missing_api_key"));
  }
  request.ascribe.keyPrefix = displayPrefix(key);
  return record;
}

/** Plan (`plan_free_no_api`): the API is for paid plans. */
export function checkPlan(record: KeyRecord): void {
  if (record.plan === "free") throw new ApiError("plan_free_no_api");
}

/**
 * Per-key rate limit: every authenticated request past the plan counts once. Past the limit it
 * throws `rate_limited`; the caller's answer carries what is left either way.
 */
export async function meter(deps: KeyedDeps, record: KeyRecord, request: FastifyRequest): Promise<void> {
  const used = await deps.counters.hit(`rate:${record.key_id}`, WINDOW_MS);
  request.ascribe.rateLimitRemaining = Math.max(0, RATE_LIMIT - used.count);
  if (used.count > RATE_LIMIT) {
    throw new ApiError("rate_limited", { retry_after_seconds: RETRY_AFTER_SECONDS });
  }
}

/** Scope (`insufficient_scope`, naming the scope required). */
export function checkScope(record: KeyRecord, scope: Scope): void {
  if (!grants(record.scopes, scope)) throw new ApiError("insufficient_scope", { required: scope });
}

/** What an audit row says of the request it records, beside the key, address and time. */
export interface AuditTarget {
  method: string;
  path: string;
  scope: string;
}

/**
 * Records one audit row for an authenticated request. Called before the answer leaves, so a stop
 * that waits for handlers loses none.
 */
export function auditRequest(
  deps: KeyedDeps,
  request: FastifyRequest,
  record: KeyRecord,
  target: AuditTarget,
  status: number,
): void {
  deps.audit.record(record.account_id, {
    key_id: record.key_id,
    ...target,
    status,
    ip: request.ip,
    occurred_at: deps.clock().toISOString(),
  });
}

/** The status an error answers with (the error handler's own mapping: anything else is a 502). */
export function statusOf(err: unknown): number {
  return err instanceof ApiError ? err.status : 502;
}

export interface KeyedContext {
  record: KeyRecord;
  now: Date;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * The key steps of DESIGN §5, after routing: failed-auth gate → key → plan → rate limit → scope, then
 * `run`; every authenticated request is audited, whatever its outcome.
 */
export function keyedHandler(
  deps: KeyedDeps,
  options: { scope: Scope | null },
  run: (ctx: KeyedContext) => Promise<unknown>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const record = await authenticate(deps, request, reply);
    const path = request.url.split("?")[0] ?? request.url;
    const target = { method: request.method, path, scope: options.scope ?? "" };
    let status = 200;
    try {
      checkPlan(record);
      await meter(deps, record, request);
      if (options.scope !== null) checkScope(record, options.scope);
      const result = await run({ record, now: deps.clock(), request, reply });
      status = reply.statusCode;
      return result;
    } catch (err) {
      status = statusOf(err);
      throw err;
    } finally {
      auditRequest(deps, request, record, target, status);
    }
  };
}

/**
 * A registry route's work once its caller is admitted: the handler in the tenant's database (a
 * read without a transaction on PostgreSQL, a write in one) → barrier → redaction → envelope. The
 * REST route and an MCP tool call both end here.
 */
export async function runRoute(
  route: RouteDef,
  deps: Pick<PipelineDeps, "db" | "files">,
  record: KeyRecord,
  input: unknown,
  now: Date,
): Promise<Record<string, unknown>> {
  const tenant: Tenant = {
    accountId: record.account_id,
    plan: record.plan,
    timezone: record.timezone,
    currency: record.currency,
  };
  const reads = route.methods.every((method) => method === "GET");
  const session = reads ? deps.db.read.bind(deps.db) : deps.db.tenant.bind(deps.db);
  const data = await session(tenant.accountId, (tx) =>
    route.handler({ tx, tenant, input, now, files: deps.files }),
  );
  assertSingleTenant(data, tenant.accountId);
  if (data instanceof InlineError) {
    const body = redact(data.body, route.redactFragments) as Record<string, unknown>;
    return { ...body, data: body };
  }
  return { data: redact(data, route.redactFragments) };
}

/** The request pipeline of a registry route: the key steps (above) → validation → `runRoute`. */
export function pipelineHandler(route: RouteDef, deps: PipelineDeps) {
  return keyedHandler(deps, { scope: route.scope }, async ({ record, now, request, reply }) => {
    const input = validateInput(route, readInput(request));
    // A whole list the route streams (stream-rows.ts); any other answer is built whole.
    const streamed = await streamedList(route, deps, record, input, now, reply);
    return streamed ?? runRoute(route, deps, record, input, now);
  });
}
