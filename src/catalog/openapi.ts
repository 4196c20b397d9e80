import { z } from "zod";
import { ERROR_STATUS } from "../http/errors.ts";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";

type JsonSchema = Record<string, unknown>;

function queryParameters(schema: JsonSchema) {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: "query",
    required: required.has(name),
    schema: s,
    ...(typeof s.description === "string" ? { description: s.description } : {}),
  }));
}

const errorResponse = {
  description:
    "Error: `error` names it; some errors add members (`required`, `retry_after_seconds`, `route`).",
  content: {
    "application/json": {
      schema: { type: "object", required: ["error"], properties: { error: { type: "string" } } },
    },
  },
};

/** OpenAPI 3.1 document generated from the route registry, so it cannot drift from the router. */
export function buildOpenApi(routes: readonly RouteDef[], siteUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const input = z.toJSONSchema(route.input, { io: "input", unrepresentable: "any" }) as JsonSchema;
    const item: Record<string, unknown> = paths[route.path] ?? {};
    for (const method of route.methods) {
      const operation: Record<string, unknown> = {
        operationId: `${method.toLowerCase()}${route.path.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
        summary: route.description,
        security: [{ bearer: [] }, { apiKeyHeader: [] }],
        "x-required-scope": route.scope,
        responses: {
          "200": { description: "`data` holds the result." },
          ...Object.fromEntries(
            [...new Set(Object.values(ERROR_STATUS))].map((status) => [String(status), errorResponse]),
          ),
        },
      };
      if (method === "GET") operation.parameters = queryParameters(input);
      else operation.requestBody = { required: true, content: { "application/json": { schema: input } } };
      item[method.toLowerCase()] = operation;
    }
    paths[route.path] = item;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Ascribe API", version: "1" },
    servers: [{ url: siteUrl + API_PREFIX }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
    paths,
  };
}
