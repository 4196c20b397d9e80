import { pipeline, Readable, Transform } from "node:stream";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { buildOpenApi } from "../../src/catalog/openapi.ts";
import { API_PREFIX, type RouteDef } from "../../src/routes/route-def.ts";

// ajv-formats is CommonJS: under ESM its function arrives as the default export's default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

export interface Violation {
  method: string;
  url: string;
  status: number;
  problem: string;
}

type Json = Record<string, unknown>;

/**
 * Checks every JSON answer of the app's documented addresses against the OpenAPI document built
 * from the same routes: the status must be documented for that operation and the body must fit
 * the schema documented for it. Findings are collected (the answer itself is left alone, so the
 * test sees what the API sent) and reported when the app closes: a test file whose responses stray
 * from the reference fails.
 */
export function checkResponsesAgainstOpenApi(
  app: FastifyInstance,
  routes: readonly RouteDef[],
  siteUrl: string,
): { violations: Violation[] } {
  const doc = buildOpenApi(routes, siteUrl) as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
    components: { responses: Record<string, Json>; schemas: Record<string, Json> };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validators = new Map<string, ValidateFunction>();
  // Refs like #/components/schemas/forbidden resolve against the document's components.
  const compile = (key: string, schema: Json) => {
    let validate = validators.get(key);
    if (validate === undefined) {
      validate = ajv.compile({ ...schema, components: doc.components });
      validators.set(key, validate);
    }
    return validate;
  };
  const violations: Violation[] = [];

  // null: an address outside the document (the agents' /tools and /mcp, described elsewhere).
  const schemaFor = (routeUrl: string, method: string, status: number): Json | string | null => {
    const path = routeUrl === API_PREFIX ? "/" : routeUrl.slice(API_PREFIX.length);
    const item = doc.paths[path];
    if (item === undefined) return null;
    const operation = item[method.toLowerCase()];
    // Other methods of a documented path all answer the shared 405 body.
    if (operation === undefined) {
      return status === 405
        ? { $ref: "#/components/schemas/method_not_allowed" }
        : `${method} ${path} is not documented`;
    }
    let response = operation.responses[String(status)];
    if (response === undefined) return `status ${status} is not documented for ${method} ${path}`;
    const ref = response.$ref;
    if (typeof ref === "string") response = doc.components.responses[ref.split("/").pop() ?? ""] ?? {};
    const content = response.content as Record<string, { schema: Json }> | undefined;
    const schema = content?.["application/json"]?.schema;
    return schema ?? `no JSON schema documented for ${status} of ${method} ${path}`;
  };

  app.addHook("onSend", async (request, reply, payload) => {
    const routeUrl = request.routeOptions.url;
    const documented =
      routeUrl !== undefined && (routeUrl === API_PREFIX || routeUrl.startsWith(`${API_PREFIX}/`));
    if (!documented || request.method === "HEAD" || request.method === "OPTIONS") return payload;
    const status = reply.statusCode;
    const found = { method: request.method, url: request.url, status };
    const schema = schemaFor(routeUrl, request.method, status);
    if (schema === null) return payload;
    if (typeof schema === "string") {
      violations.push({ ...found, problem: schema });
      return payload;
    }
    const type = String(reply.getHeader("content-type") ?? "");
    const check = (body: string) => {
      const validate = compile(`${routeUrl} ${request.method} ${status}`, schema);
      if (!validate(JSON.parse(body))) {
        const errors = (validate.errors ?? [])
          .slice(0, 5)
          .map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
        violations.push({
          ...found,
          problem: `body does not fit the documented schema: ${errors.join("; ")}`,
        });
      }
    };
    if (type.startsWith("application/json") && payload instanceof Readable) {
      // A streamed list (http/stream-rows.ts): passed on as it comes, checked whole at its end; a
      // stream that fails is cut as it would have been.
      const chunks: Buffer[] = [];
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          chunks.push(chunk);
          done(null, chunk);
        },
        flush(done) {
          check(Buffer.concat(chunks).toString("utf8"));
          done();
        },
      });
      // A failure reaches Fastify through `tap`, destroyed with it.
      pipeline(payload, tap, () => {});
      return tap;
    }
    if (!type.startsWith("application/json") || typeof payload !== "string") {
      violations.push({ ...found, problem: `not a JSON body (${type})` });
      return payload;
    }
    check(payload);
    return payload;
  });

  app.addHook("onClose", async () => {
    if (violations.length === 0) return;
    const list = violations.map((v) => `${v.method} ${v.url} → ${v.status}: ${v.problem}`).join("\n");
    throw new Error(`${violations.length} response(s) do not conform to the OpenAPI document:\n${list}`);
  });

  return { violations };
}
