import type { z } from "zod";
import type { Scope } from "../auth/scopes.ts";
import type { Sql } from "../db/client.ts";
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
export interface RouteDef<S extends z.ZodType = z.ZodType> {
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
  /** Field-name fragments stripped on top of the spec's list (finance/pnl). */
  redactFragments?: readonly string[];
  handler(ctx: HandlerContext<z.output<S>>): Promise<unknown>;
}

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

/** Keeps each route's handler typed by its own schema while the registry holds them together. */
export function defineRoute<S extends z.ZodType>(def: RouteDef<S>): RouteDef {
  return def as unknown as RouteDef;
}
