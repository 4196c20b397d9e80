import { z } from "zod";
import { READ_SCOPES, SCOPE_DOCS, type Scope, WRITE_SCOPES } from "../auth/scopes.ts";
import { ERROR_STATUS, type ErrorCode } from "../http/errors.ts";
import { FAILED_AUTH_LIMIT, RATE_LIMIT } from "../http/pipeline.ts";
import { queryParamDocs } from "../reports/window.ts";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";
import { ERROR_DOCS } from "./error-docs.ts";
import { indexOutput } from "./index-listing.ts";

export type JsonSchema = Record<string, unknown>;

/** Errors the pipeline can answer on every key-authenticated route, before and after its handler. */
const PIPELINE_ERRORS: readonly ErrorCode[] = [
  "invalid_or_missing_api_key",
  "insufficient_scope",
  "plan_free_no_api",
  "rate_limited",
  "too_many_failed_attempts",
  "tenant_barrier",
  "upstream_error",
  // Load shedding refuses any request, keyed or not, before its key is read.
  "overloaded",
];

/** Parameter texts shared by many routes; a route's own wording stays in its description. */
const PARAM_TEXT: Readonly<Record<string, string>> = {
  from: "First day of the window (inclusive), in the account's timezone.",
  to: "Last day of the window (inclusive), in the account's timezone; not before `from`.",
  limit: "Page size; a value above the maximum is read as the maximum.",
  offset: "Rows to skip (paging by limit and offset).",
  cursor:
    "Next page: the last row's `cursor` (or its `event_datetime`); the page holds only strictly older events.",
  search: "A fragment to look for (case-insensitive).",
};

/** Response headers every answer carries (SPEC "Conventions common to responses"). */
const COMMON_HEADERS = {
  "Cache-Control": { description: "Always `private, no-store`.", schema: { type: "string" } },
  "X-RateLimit-Limit": {
    description: "Requests allowed per key and 60-second window.",
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the key's current window.",
    schema: { type: "integer" },
  },
  "X-Request-Id": {
    description: "This request's id (give it when reporting a problem).",
    schema: { type: "string" },
  },
};

const RETRY_AFTER = { description: "Seconds to wait before retrying.", schema: { type: "integer" } };

/** Responses name the shared headers and error bodies in `components`, once for the whole document. */
const headerRefs = (names: readonly string[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const COMMON_HEADER_REFS = headerRefs(Object.keys(COMMON_HEADERS));
const errorRef = (code: ErrorCode) => ({ $ref: `#/components/schemas/${code}` });

/** A zod schema as a JSON Schema (draft 2020-12, OpenAPI 3.1's dialect), without its `$schema`. */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: (ctx) => {
      // zod's int() writes the safe-integer bounds; every JSON integer here is within them.
      if (ctx.jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete ctx.jsonSchema.minimum;
      if (ctx.jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete ctx.jsonSchema.maximum;
      const doc = queryParamDocs.get(ctx.zodSchema);
      if (doc === undefined) return;
      // A parsed integer: the text pattern the parser checks says nothing more.
      if (doc.type === "integer") delete ctx.jsonSchema.pattern;
      Object.assign(ctx.jsonSchema, doc);
    },
  }) as JsonSchema;
  return json;
}

/** The route's query parameters or body, as the reference shows them. */
export function inputSchemaOf(route: RouteDef): JsonSchema {
  return jsonSchemaOf(route.input, "input");
}

function canRefuseInput(route: RouteDef, input: JsonSchema): boolean {
  const properties = (input.properties ?? {}) as Record<string, unknown>;
  return route.methods.some((m) => m !== "GET") || Object.keys(properties).length > 0;
}

/** Every error a route can answer: the pipeline's, validation's when its input can fail, its own. */
export function routeErrors(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(PIPELINE_ERRORS);
  if (canRefuseInput(route, inputSchemaOf(route))) codes.add("validation");
  for (const code of route.errors ?? []) codes.add(code);
  return [...codes].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b] || a.localeCompare(b));
}

/** The body of one error: `error` and the members the code adds (the route's own scope for `required`). */
function errorBodySchema(code: ErrorCode, route: RouteDef | null): JsonSchema {
  const extra = Object.entries(ERROR_DOCS[code].extra ?? {}).map(([name, schema]) => {
    const json = jsonSchemaOf(schema, "output");
    return [name, code === "insufficient_scope" && route ? { ...json, const: route.scope } : json] as const;
  });
  return {
    type: "object",
    title: code,
    properties: {
      error:
        code === "validation" ? { type: "string", description: "The validation message." } : { const: code },
      ...Object.fromEntries(extra),
    },
    required: ["error", ...extra.map(([name]) => name)],
    additionalProperties: false,
  };
}

/**
 * Responses several routes give alike (401, 429, 5xx…), named once in `components.responses`: the
 * document stays small enough for the reference page to load at once.
 */
type SharedResponses = Map<string, { name: string; response: unknown; uses: number }>;

function errorResponses(route: RouteDef, shared: SharedResponses): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(route)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => {
      const lines = codes.map((code) => {
        if (code !== "validation") return `- \`${code}\`: ${ERROR_DOCS[code].cause}`;
        const own = route.required
          ? ` Without \`${route.required.field}\`: \`${route.required.error}\`.`
          : "";
        return `- validation message: ${ERROR_DOCS.validation.cause}${own}`;
      });
      // insufficient_scope names the route's own scope: its body is the route's, not a shared one.
      const schemas = codes.map((code) =>
        code === "insufficient_scope" ? errorBodySchema(code, route) : errorRef(code),
      );
      const only = schemas.length === 1 ? schemas[0] : undefined;
      const response = {
        description: lines.join("\n"),
        headers:
          status === 429 || status === 503
            ? headerRefs([...Object.keys(COMMON_HEADERS), "Retry-After"])
            : COMMON_HEADER_REFS,
        content: { "application/json": { schema: only ?? { anyOf: schemas } } },
      };
      const key = JSON.stringify(response);
      const base = `${status}_${codes.join("_or_")}`;
      // Alike codes with another body (a route's own scope or message) get the next free name.
      const taken = new Set([...shared.values()].map((e) => e.name));
      let name = base;
      for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
      const entry = shared.get(key) ?? { name, response, uses: 0 };
      entry.uses += 1;
      shared.set(key, entry);
      return [String(status), { $ref: `#/components/responses/${entry.name}`, key }];
    }),
  );
}

/** The 200 body: `{ data }`, or for an InlineError its members beside `data` (SPEC's /touchpoints case). */
function successSchema(route: RouteDef): JsonSchema {
  const envelope = (data: JsonSchema) => ({
    type: "object",
    properties: { data },
    required: ["data"],
    additionalProperties: false,
  });
  const data = route.output ? jsonSchemaOf(route.output, "output") : {};
  if (!route.inlineError) return envelope(data);
  const inline = jsonSchemaOf(route.inlineError, "output");
  const members = (inline.properties ?? {}) as Record<string, unknown>;
  return {
    anyOf: [
      envelope(data),
      {
        type: "object",
        description: "Answered with 200: the error beside an empty result, also under `data`.",
        properties: { ...members, data: inline },
        required: ["data", ...Object.keys(members)],
        additionalProperties: false,
      },
    ],
  };
}

function queryParameters(route: RouteDef, input: JsonSchema) {
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((input.required ?? []) as string[]);
  return Object.entries(properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    const text = typeof description === "string" ? description : PARAM_TEXT[name];
    const given = route.example?.[name];
    // The example is the query text; shown against an integer schema, it is that integer.
    const example = rest.type === "integer" && typeof given === "string" ? Number(given) : given;
    return {
      name,
      in: "query",
      required: required.has(name),
      schema: rest,
      ...(text === undefined ? {} : { description: text }),
      ...(example === undefined ? {} : { example }),
    };
  });
}

/** Text a shell keeps as one word inside single quotes. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A copy-paste curl for the route, its key read from `$ASCRIBE_API_KEY`. */
export function curlSample(route: RouteDef, method: string, baseUrl: string): string {
  const auth = `-H "Authorization: Bearer $ASCRIBE_API_KEY"`;
  if (method === "GET") {
    const query = new URLSearchParams(
      Object.entries(route.example ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
    ).toString();
    const url = `${baseUrl}${route.path}${query ? `?${query}` : ""}`;
    return `curl -s ${auth} \\\n  ${shellQuote(url)}`;
  }
  const body = JSON.stringify(route.example ?? {});
  return [
    `curl -s -X ${method} ${auth}`,
    `  -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(body)}`,
    `  ${shellQuote(baseUrl + route.path)}`,
  ].join(" \\\n");
}

/** The reference's group of a route: the noun of its scope (ads, calls, journeys…). */
const tagOf = (scope: Scope) => scope.split(":")[1] ?? scope;

/** A short title: the description's first clause. */
function summaryOf(description: string): string {
  const cut = description.search(/[:.(;]|, (?:and|with|each)\b/);
  const head = (cut > 0 ? description.slice(0, cut) : description).trim();
  return head.length <= 70 ? head : `${head.slice(0, 67).trimEnd()}…`;
}

function operationId(method: string, path: string): string {
  return `${method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`;
}

/** The scope, the limits of the route's parameters and the whole description, as markdown. */
function operationDescription(route: RouteDef, input: JsonSchema): string {
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const limits = Object.entries(properties)
    .filter(([, s]) => s.maximum !== undefined)
    .map(([name, s]) => `\`${name}\` default ${String(s.default)}, max ${String(s.maximum)}`);
  return [
    route.description,
    "",
    `**Scope:** \`${route.scope}\` (${SCOPE_DOCS[route.scope]}).`,
    ...(limits.length > 0 ? ["", `**Limits:** ${limits.join("; ")}.`] : []),
  ].join("\n");
}

function routeOperation(
  route: RouteDef,
  method: string,
  baseUrl: string,
  shared: SharedResponses,
): Record<string, unknown> {
  const input = inputSchemaOf(route);
  const operation: Record<string, unknown> = {
    operationId: operationId(method, route.path),
    summary: summaryOf(route.description),
    description: operationDescription(route, input),
    tags: [tagOf(route.scope)],
    // OpenAPI 3.1 lets a non-OAuth requirement list roles: the route's one scope.
    security: [{ bearer: [route.scope] }, { apiKeyHeader: [route.scope] }],
    "x-required-scope": route.scope,
  };
  if (method === "GET") operation.parameters = queryParameters(route, input);
  else {
    operation.requestBody = {
      required: true,
      content: {
        "application/json": { schema: input, ...(route.example ? { example: route.example } : {}) },
      },
    };
  }
  operation.responses = {
    "200": {
      description: "Success: `data` holds the result.",
      headers: COMMON_HEADER_REFS,
      content: { "application/json": { schema: successSchema(route) } },
    },
    ...errorResponses(route, shared),
  };
  operation["x-codeSamples"] = [{ lang: "Shell", label: "curl", source: curlSample(route, method, baseUrl) }];
  return operation;
}

/** The public index and this document: no key. */
function publicPaths(baseUrl: string): Record<string, Record<string, unknown>> {
  const open = (id: string, summary: string, description: string, schema: JsonSchema, path: string) => ({
    get: {
      operationId: id,
      summary,
      description,
      tags: ["index"],
      security: [],
      responses: {
        "200": {
          description: "Success.",
          headers: COMMON_HEADER_REFS,
          content: { "application/json": { schema } },
        },
        "503": {
          description: `- \`overloaded\`: ${ERROR_DOCS.overloaded.cause}`,
          headers: headerRefs([...Object.keys(COMMON_HEADERS), "Retry-After"]),
          content: { "application/json": { schema: errorRef("overloaded") } },
        },
      },
      "x-codeSamples": [{ lang: "Shell", label: "curl", source: `curl -s ${shellQuote(baseUrl + path)}` }],
    },
  });
  return {
    "/": open(
      "getIndex",
      "The index",
      "Every route with its method, scope and full path, the base address and the reference's link. No key needed (with or without a trailing slash).",
      {
        type: "object",
        properties: { data: jsonSchemaOf(indexOutput, "output") },
        required: ["data"],
        additionalProperties: false,
      },
      "",
    ),
    "/openapi.json": open(
      "getOpenApi",
      "This OpenAPI document",
      "The OpenAPI 3.1 document of the API, generated from the route registry. No key needed.",
      { type: "object", required: ["openapi", "info", "paths"] },
      "/openapi.json",
    ),
  };
}

/** Errors of a key-checked path outside the registry (/tools): the pipeline's, but for scopes. */
const KEYED_ERRORS = PIPELINE_ERRORS.filter(
  (code) => code !== "insufficient_scope" && code !== "tenant_barrier",
);

/** `GET /tools` (SPEC "Index and manifest"): any valid key; the tools its scopes cover. */
function toolsPath(baseUrl: string): Record<string, Record<string, unknown>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of KEYED_ERRORS)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const tool = {
    type: "object",
    properties: {
      name: { type: "string" },
      method: { enum: ["GET", "PUT", "POST"] },
      path: { type: "string", description: "The full address." },
      scope: { type: "string" },
      description: { type: "string" },
      inputSchema: { type: "object", description: "JSON Schema of the query (GET) or of the body." },
    },
    required: ["name", "method", "path", "scope", "description", "inputSchema"],
    additionalProperties: false,
  };
  return {
    "/tools": {
      get: {
        operationId: "getTools",
        summary: "The tool manifest",
        description:
          "One tool per route the key's scopes cover, for agent frameworks; the calls and creatives routes are left out (the index lists them). Any valid key.",
        tags: ["index"],
        security: [{ bearer: [] }, { apiKeyHeader: [] }],
        responses: {
          "200": {
            description: "Success.",
            headers: COMMON_HEADER_REFS,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    data: {
                      type: "object",
                      properties: { tools: { type: "array", items: tool } },
                      required: ["tools"],
                      additionalProperties: false,
                    },
                  },
                  required: ["data"],
                  additionalProperties: false,
                },
              },
            },
          },
          ...Object.fromEntries(
            [...byStatus].map(([status, codes]) => [
              String(status),
              {
                description: codes.map((code) => `- \`${code}\`: ${ERROR_DOCS[code].cause}`).join("\n"),
                headers: COMMON_HEADER_REFS,
                content: { "application/json": { schema: { anyOf: codes.map(errorRef) } } },
              },
            ]),
          ),
        },
        "x-codeSamples": [
          {
            lang: "Shell",
            label: "curl",
            source: `curl -s -H "Authorization: Bearer $ASCRIBE_API_KEY" ${shellQuote(`${baseUrl}/tools`)}`,
          },
        ],
      },
    },
  };
}

function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** The reference's front page: authentication, scopes, limits and errors, from the same sources. */
function infoDescription(routes: readonly RouteDef[], baseUrl: string): string {
  const routesOf = (scope: Scope) =>
    routes
      .filter((r) => r.scope === scope)
      .map((r) => `${r.methods.join("/")} \`${r.path}\``)
      .join(", ");
  const scopeRows = [...READ_SCOPES, ...WRITE_SCOPES].map((s) => [`\`${s}\``, SCOPE_DOCS[s], routesOf(s)]);
  const limitRows = routes.flatMap((route) => {
    const properties = (inputSchemaOf(route).properties ?? {}) as Record<string, JsonSchema>;
    return Object.entries(properties)
      .filter(([, s]) => s.maximum !== undefined || (s.type === "integer" && s.default !== undefined))
      .map(([name, s]) => [
        `\`${route.path}\` \`${name}\``,
        `default ${String(s.default)}${s.maximum === undefined ? "" : `, max ${String(s.maximum)}`}`,
      ]);
  });
  const errorRows = (Object.keys(ERROR_STATUS) as ErrorCode[])
    .filter((code) => ERROR_DOCS[code].api)
    .sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b])
    .map((code) => [
      String(ERROR_STATUS[code]),
      code === "validation" ? "(the message)" : `\`${code}\``,
      Object.keys(ERROR_DOCS[code].extra ?? {})
        .map((m) => `\`${m}\``)
        .join(", "),
      ERROR_DOCS[code].cause,
    ]);
  return [
    "Attribution and sales intelligence for one account: ad spend, multi-touch attribution, CRM events, sales, finance, funnel, contacts, calls, journeys, creatives, ICP criteria and pixels, plus a few writes (goals, the sale counting rule, ICP criteria, ad rules, creatives).",
    "",
    `Base address: \`${baseUrl}\`. Reads are \`GET\` with query parameters; writes are \`PUT\`/\`POST\` with \`Content-Type: application/json\`. Success is HTTP 200 with the result under \`data\`; an error is \`{ "error": … }\` with its status. Dates \`from\`/\`to\` are \`YYYY-MM-DD\` in the account's timezone; without them each report uses its own default window (the last 30 days).`,
    "",
    "## Authentication",
    "",
    "Every route except the index and this document needs an API key: `Authorization: Bearer <API_KEY>`, or `x-api-key: <API_KEY>` (when both are sent, `Authorization` is read). A key is `svc_sk_live_` followed by 32 characters; it belongs to one account, which every request acts on, and is created in the application (Settings, API keys), never through the API. A key is never read from the query string. CORS is open to any origin: the key is the only protection, so use it from servers only. Keys of free-plan accounts are refused (`plan_free_no_api`).",
    "",
    "```sh",
    `curl -s -H "Authorization: Bearer $ASCRIBE_API_KEY" ${baseUrl}/dashboard/kpis`,
    "```",
    "",
    "## Scopes",
    "",
    "Each route needs exactly one scope (`insufficient_scope` otherwise, with `required` naming it); `*` grants them all. Write scopes are never granted by default.",
    "",
    markdownTable(["Scope", "Grants", "Routes"], scopeRows),
    "",
    "## Limits",
    "",
    markdownTable(
      ["Limit", "Value"],
      [
        [
          "Request rate",
          `${RATE_LIMIT} requests per minute per key, fixed 60-second windows (every authenticated request counts); \`X-RateLimit-Limit\` and \`X-RateLimit-Remaining\` on every answer; beyond: 429 \`rate_limited\``,
        ],
        [
          "Failed authentications",
          `more than ${FAILED_AUTH_LIMIT} answers 401 within a minute from one IP address: 429 \`too_many_failed_attempts\` for the rest of that minute`,
        ],
        ["Request body", "1 MiB"],
        ...limitRows,
      ],
    ),
    "",
    "## Errors",
    "",
    "The body is an object with `error`; some add members. A 5xx never tells the internals.",
    "",
    markdownTable(["Status", "`error`", "Other members", "Cause"], errorRows),
  ].join("\n");
}

/** OpenAPI 3.1 document generated from the route registry, so it cannot drift from the router. */
export function buildOpenApi(routes: readonly RouteDef[], siteUrl: string) {
  const baseUrl = siteUrl + API_PREFIX;
  const paths: Record<string, Record<string, unknown>> = { ...publicPaths(baseUrl), ...toolsPath(baseUrl) };
  const shared: SharedResponses = new Map();
  for (const route of routes) {
    const item: Record<string, unknown> = paths[route.path] ?? {};
    for (const method of route.methods) {
      item[method.toLowerCase()] = routeOperation(route, method, baseUrl, shared);
    }
    paths[route.path] = item;
  }
  // A response only one operation gives goes back inline; the others stay named.
  const responses: Record<string, unknown> = {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item) as { responses: Record<string, Record<string, unknown>> }[]) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const entry = typeof response.key === "string" ? shared.get(response.key) : undefined;
        if (entry === undefined) continue;
        if (entry.uses > 1) {
          responses[entry.name] = entry.response;
          operation.responses[status] = { $ref: response.$ref };
        } else operation.responses[status] = entry.response as Record<string, unknown>;
      }
    }
  }
  const tags = [...new Set(routes.map((r) => r.scope))].map(tagOf);
  return {
    openapi: "3.1.0",
    info: { title: "Ascribe API", version: "1", description: infoDescription(routes, baseUrl) },
    servers: [{ url: baseUrl }],
    tags: [
      { name: "index", description: "The index and this document: no key needed." },
      ...[...new Set(tags)].map((name) => ({
        name,
        description: [...READ_SCOPES, ...WRITE_SCOPES]
          .filter((s) => tagOf(s) === name)
          .map((s) => `\`${s}\`: ${SCOPE_DOCS[s]}.`)
          .join(" "),
      })),
    ],
    components: {
      responses,
      headers: { ...COMMON_HEADERS, "Retry-After": RETRY_AFTER },
      schemas: Object.fromEntries(
        (Object.keys(ERROR_STATUS) as ErrorCode[])
          .filter((code) => ERROR_DOCS[code].api)
          .map((code) => [code, { ...errorBodySchema(code, null), description: ERROR_DOCS[code].cause }]),
      ),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer svc_sk_live_…` (read first when both headers are sent).",
        },
        apiKeyHeader: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "`x-api-key: svc_sk_live_…`",
        },
      },
    },
    paths,
  };
}
