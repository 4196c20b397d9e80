import { z } from "zod";
import { grants } from "../auth/scopes.ts";
import { API_PREFIX, type HttpMethod, type RouteDef } from "../routes/route-def.ts";

export type JsonSchema = Record<string, unknown>;

/** MCP's tool annotations: hints a client shows or acts on (confirmation before a destructive call). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One route as a tool: the /tools manifest entry and the MCP tool are both made from it. */
export interface ToolDef {
  name: string;
  /** The method the tool calls (a write route accepting PUT and POST is called with its first). */
  method: HttpMethod;
  /** Relative to the API base, e.g. "/dashboard/kpis". */
  path: string;
  scope: RouteDef["scope"];
  description: string;
  /** JSON Schema of the query (GET) or of the JSON body (PUT/POST). */
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  route: RouteDef;
}

/**
 * How each write acts, which no schema tells: a name that says what it does (reads are named
 * `get_…` from their path), whether it destroys or arms something, whether a replay is harmless.
 * tools.test.ts fails for a write route missing here, so a new write is classified on purpose.
 */
export const WRITE_TOOLS: Readonly<
  Record<string, { name: string; destructive: boolean; idempotent: boolean }>
> = {
  "/goals": { name: "set_goals", destructive: false, idempotent: true },
  "/sale-rule": { name: "set_sale_rule", destructive: false, idempotent: true },
  "/icp": { name: "set_icp_criteria", destructive: false, idempotent: true },
  "/ads/rules/enable": { name: "enable_ad_rule", destructive: false, idempotent: true },
  // dry_run false arms the rule: from then on it pauses ads and changes budgets for real.
  "/ads/rules/dry-run": { name: "set_ad_rule_dry_run", destructive: true, idempotent: true },
  "/ads/rules/delete": { name: "delete_ad_rule", destructive: true, idempotent: false },
  "/creatives/upload-url": { name: "create_creative_upload_url", destructive: false, idempotent: false },
  "/creatives/import": { name: "import_creative", destructive: false, idempotent: true },
  "/creatives/requests/ack": { name: "ack_creative_requests", destructive: false, idempotent: true },
};

/**
 * SPEC "Index and manifest": /tools leaves out the calls and creatives routes (the index is their
 * reference list) — those of the calls and creatives scopes, /contacts/calls included.
 */
const MANIFEST_OMITS: readonly string[] = ["read:calls", "read:creatives", "write:creatives"];

function readName(path: string): string {
  return `get_${path.slice(1).replace(/[^a-z0-9]+/g, "_")}`;
}

/** The route's input as JSON Schema, as a client sends it (query strings stay strings). */
export function inputJsonSchema(route: RouteDef): JsonSchema {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(route.input, {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  return schema;
}

/** Each route's tool, built once: its JSON Schema is derived from zod, too slow for every request. */
const builtTools = new WeakMap<RouteDef, ToolDef>();

export function toolFor(route: RouteDef): ToolDef {
  let tool = builtTools.get(route);
  if (!tool) {
    tool = buildTool(route);
    builtTools.set(route, tool);
  }
  return tool;
}

function buildTool(route: RouteDef): ToolDef {
  const method = route.methods[0];
  if (method === undefined) throw new Error(`${route.path}: a route without a method`);
  const isRead = method === "GET";
  const write = WRITE_TOOLS[route.path];
  const fallback = `${method.toLowerCase()}_${route.path.slice(1).replace(/[^a-z0-9]+/g, "_")}`;
  return {
    name: isRead ? readName(route.path) : (write?.name ?? fallback),
    method,
    path: route.path,
    scope: route.scope,
    description: route.description,
    inputSchema: inputJsonSchema(route),
    annotations: {
      readOnlyHint: isRead,
      // An unclassified write is assumed destructive: a client then asks before running it.
      destructiveHint: !isRead && (write?.destructive ?? true),
      idempotentHint: isRead || (write?.idempotent ?? false),
      openWorldHint: false,
    },
    route,
  };
}

/**
 * The tools a key may call: one per route its scopes cover. `manifest` applies the /tools rule of
 * leaving out the calls and creatives routes; MCP offers every route the key allows.
 */
export function toolsFor(
  routes: readonly RouteDef[],
  scopes: readonly string[],
  options: { manifest: boolean },
): ToolDef[] {
  return routes
    .filter((route) => grants(scopes, route.scope))
    .filter((route) => !(options.manifest && MANIFEST_OMITS.includes(route.scope)))
    .map(toolFor);
}

/** `GET {base_url}/tools`: the manifest entries, paths written in full like the index's. */
export function buildToolManifest(routes: readonly RouteDef[], scopes: readonly string[], siteUrl: string) {
  const baseUrl = siteUrl + API_PREFIX;
  return {
    tools: toolsFor(routes, scopes, { manifest: true }).map((tool) => ({
      name: tool.name,
      method: tool.method,
      path: baseUrl + tool.path,
      scope: tool.scope,
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
  };
}
