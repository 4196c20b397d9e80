import type { z } from "zod";
import type { Scope } from "../auth/scopes.ts";
import type { AccountRows } from "../db/account-rows.ts";
import type { Sql } from "../db/client.ts";
import type { ErrorCode } from "../http/errors.ts";
import type { ObjectStore } from "../storage/object-store.ts";

export const API_PREFIX = "/api/v1";

export type HttpMethod = "GET" | "PUT" | "POST";

/** The account a request acts for, as resolved from its key. */
export interface Tenant {
  accountId: string;
  plan: "free" | "pro" | "business";
  timezone: string;
  currency: string;
}

export interface HandlerContext<I> {
  /** A transaction already scoped to the tenant (request role, RLS). */
  tx: Sql;
  tenant: Tenant;
  input: I;
  now: Date;
  /** Recordings and uploads: signed URLs, never the files themselves. */
  files: ObjectStore;
}

/**
 * One declarative object per endpoint: the router, the index, and later the OpenAPI document,
 * the /tools manifest and the MCP tools are all generated from these.
 */
export interface RouteDef<S extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  methods: readonly HttpMethod[];
  /** Relative to the API base, e.g. "/icp/criteria". */
  path: string;
  scope: Scope;
  /** Query parameters for GET, JSON body for PUT/POST. */
  input: S;
  /** A body member whose absence answers the spec's own message instead of a generic one. */
  required?: {
    field: string;
    error: string;
    /** Any fault inside the member answers the same error (SPEC's "non-empty array of UUIDs, else …"). */
    wholeValue?: boolean;
  };
  /** Tool text: what the route does, for humans and agents. */
  description: string;
  /**
   * What `data` holds on success, field by field as the API names them: the OpenAPI response schema,
   * checked against every response of the test suite. Optional only while a route is being written:
   * the OpenAPI test fails for a registry route without it.
   */
  output?: O;
  /** The body of the 200 an `InlineError` answers (`/touchpoints` with an unknown kind). */
  inlineError?: z.ZodType;
  /** Errors the handler itself can answer, beyond the pipeline's (key, plan, rate, scope, validation). */
  errors?: readonly ErrorCode[];
  /** A query (GET) or JSON body that works: the reference's request example and its curl. */
  example?: Readonly<Record<string, unknown>>;
  /** Field-name fragments stripped on top of the spec's list (finance/pnl). */
  redactFragments?: readonly string[];
  handler(ctx: HandlerContext<z.output<S>>): Promise<z.input<O> | InlineError>;
  /**
   * A list a REST request may get whole and long (/contacts/customers without `limit`): for this
   * input, its rows batch by batch, streamed as they are read (http/stream-rows.ts); null to answer
   * through `handler` (a page). `handler` still answers every input whole, for callers in process.
   */
  stream?(ctx: Omit<HandlerContext<z.output<S>>, "tx">): RowBatches | null;
}

/**
 * The rows of a streamed list, read batch by batch in the tenant's transaction `tx`: tagged rows
 * (`ownedRows`), or rows straight from SQL with their `account_id` (`AccountRows`).
 */
export type RowBatches = (tx: Sql) => AsyncIterable<readonly object[] | AccountRows>;

/**
 * A 200 whose body holds `error` beside an empty result — SPEC's one special case, `/touchpoints`
 * with an unknown `kind`. The body is sent both as `data` and at the top level, so a client reading
 * the envelope and one looking for `error` both see it.
 */
export class InlineError {
  readonly body: Readonly<Record<string, unknown>>;
  constructor(error: string, result: Record<string, unknown>) {
    this.body = { error, ...result };
  }
}

/**
 * Keeps each route's handler typed by its own schemas while the registry holds them together: the
 * input's output type is what the handler gets, and what it answers must fit the documented output.
 */
export function defineRoute<S extends z.ZodType, O extends z.ZodType = z.ZodType>(
  def: RouteDef<S, O>,
): RouteDef {
  return def as unknown as RouteDef;
}
