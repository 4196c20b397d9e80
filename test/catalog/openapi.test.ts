import assert from "node:assert/strict";
import { describe, test } from "node:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { z } from "zod";
import { buildOpenApi, curlSample } from "../../src/catalog/openapi.ts";
import { routes } from "../../src/routes/index.ts";
import { defineRoute } from "../../src/routes/route-def.ts";
import { bearer, createTestApp, openTestDatabase, seedAccount, useTestApp } from "../helpers/harness.ts";

/** The document as a client reads it (a JSON round trip), navigated freely as parsed JSON is. */
type Json = ReturnType<typeof JSON.parse>;

const doc: Json = JSON.parse(JSON.stringify(buildOpenApi(routes, "http://localhost:3000")));
const operation = (method: string, path: string): Json => doc.paths[path][method];
const parameter = (method: string, path: string, name: string): Json =>
  operation(method, path).parameters.find((p: Json) => p.name === name);
/** A response, its `$ref` into components.responses followed. */
const response = (op: Json, status: string): Json => {
  const found = op.responses[status];
  return found.$ref ? doc.components.responses[found.$ref.split("/").pop()] : found;
};

describe("OpenAPI document", () => {
  const ctx = useTestApp();

  test("the served document is valid OpenAPI 3.1 (swagger-parser) and needs no key", async () => {
    const res = await ctx.app.inject({ url: "/api/v1/openapi.json" });
    assert.equal(res.statusCode, 200);
    const served = res.json();
    assert.equal(served.openapi, "3.1.0");
    assert.deepEqual(served.servers, [{ url: "http://localhost:3000/api/v1" }]);
    // validate() dereferences in place: it gets its own copy.
    const validated = await SwaggerParser.validate(structuredClone(served));
    assert.equal(validated.info.title, "Ascribe API");
  });

  test("every registry route and method is an operation with its scope, as a requirement and x-required-scope", () => {
    for (const route of routes) {
      assert.ok(route.output, `${route.path} documents its data (output)`);
      for (const method of route.methods) {
        const op = operation(method.toLowerCase(), route.path);
        assert.ok(op, `${method} ${route.path}`);
        assert.equal(op["x-required-scope"], route.scope);
        assert.deepEqual(op.security, [{ bearer: [route.scope] }, { apiKeyHeader: [route.scope] }]);
        const ok = response(op, "200").content["application/json"].schema;
        assert.ok(ok.properties?.data ?? ok.anyOf, `${method} ${route.path}: 200 has a data schema`);
      }
    }
    // The index and the document itself: no key.
    assert.deepEqual(operation("get", "/").security, []);
    assert.deepEqual(operation("get", "/openapi.json").security, []);
  });

  test("parameters carry their types, defaults, maxima and enums", () => {
    assert.deepEqual(parameter("get", "/ads/rules/runs", "limit").schema, {
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 30,
    });
    assert.deepEqual(parameter("get", "/events", "limit").schema, {
      type: "integer",
      minimum: 1,
      maximum: 200,
      default: 50,
    });
    assert.deepEqual(parameter("get", "/contacts", "limit").schema.maximum, 500);
    assert.deepEqual(parameter("get", "/contacts", "offset").schema, {
      type: "integer",
      minimum: 0,
      default: 0,
    });
    assert.deepEqual(parameter("get", "/touchpoints", "limit").schema.default, 100);
    assert.deepEqual(parameter("get", "/creatives/requests", "limit").schema.maximum, 200);
    assert.deepEqual(parameter("get", "/dashboard/breakdowns", "dim").schema, {
      default: "source",
      type: "string",
      enum: ["source", "campaign", "product", "rep"],
    });
    assert.deepEqual(parameter("get", "/events", "type").schema.enum, [
      "lead",
      "application",
      "booking",
      "no_show",
      "sale",
      "cancel",
      "payment",
      "sale_lost",
    ]);
    assert.deepEqual(parameter("get", "/creatives/requests", "unnotified").schema, {
      type: "string",
      enum: ["0", "1", "true", "false"],
      default: "false",
    });
    const id = parameter("get", "/calls/recording", "id");
    assert.equal(id.required, true);
    assert.deepEqual(id.schema, { type: "integer", minimum: 1 });
    assert.equal(parameter("get", "/journeys/contact", "email").required, true);
    assert.equal(parameter("get", "/dashboard/kpis", "from").schema.format, "date");
  });

  test("request bodies are the write routes' input schemas, with a working example", () => {
    const goals = operation("put", "/goals").requestBody;
    assert.equal(goals.required, true);
    const schema = goals.content["application/json"].schema;
    assert.deepEqual(schema.required, ["goals"]);
    assert.deepEqual(schema.properties.goals.items.required, ["metric_key", "target_value"]);
    const upload = operation("post", "/creatives/upload-url").requestBody.content["application/json"].schema;
    assert.deepEqual(upload.properties.content_type.enum, [
      "image/jpeg",
      "image/png",
      "image/webp",
      "video/mp4",
    ]);
    assert.equal(upload.properties.label.maxLength, 60);
    const importRef = operation("post", "/creatives/import").requestBody.content["application/json"].schema;
    assert.equal(importRef.properties.external_ref.maxLength, 200);
    // Every example a route gives is one its own input accepts.
    for (const route of routes.filter((r) => r.example)) {
      assert.ok(route.input.safeParse(route.example).success, `${route.path}: example is valid input`);
    }
  });

  test("each operation documents every error it can answer, with the members of each body", () => {
    const statuses = (method: string, path: string) => Object.keys(operation(method, path).responses).sort();
    assert.deepEqual(statuses("get", "/calls/recording"), [
      "200",
      "400",
      "401",
      "403",
      "404",
      "429",
      "500",
      "502",
      "503",
    ]);
    // Nothing to validate: no 400.
    assert.deepEqual(statuses("get", "/icp/criteria"), ["200", "401", "403", "429", "500", "502", "503"]);
    assert.deepEqual(statuses("post", "/ads/rules/delete"), [
      "200",
      "400",
      "401",
      "403",
      "404",
      "429",
      "500",
      "502",
      "503",
    ]);

    const forbidden = response(operation("get", "/calls/recording"), "403").content["application/json"]
      .schema;
    const scoped = forbidden.anyOf.find((s: Json) => s.title === "insufficient_scope");
    assert.deepEqual(scoped, {
      type: "object",
      title: "insufficient_scope",
      properties: {
        error: { const: "insufficient_scope" },
        required: { type: "string", const: "read:calls" },
      },
      required: ["error", "required"],
      additionalProperties: false,
    });
    assert.deepEqual(
      forbidden.anyOf.filter((s: Json) => s.$ref).map((s: Json) => s.$ref),
      ["#/components/schemas/forbidden", "#/components/schemas/plan_free_no_api"],
    );
    const armed = response(operation("post", "/ads/rules/dry-run"), "403").content["application/json"].schema;
    assert.ok(armed.anyOf.some((s: Json) => s.$ref === "#/components/schemas/plan_free_no_autopilot"));
    assert.deepEqual(doc.components.schemas.rate_limited.required, ["error", "retry_after_seconds"]);
    assert.ok(response(operation("get", "/funnel"), "429").headers["Retry-After"]);
    // Load shedding: any route, the index too, with Retry-After.
    assert.deepEqual(doc.components.schemas.overloaded.required, ["error", "retry_after_seconds"]);
    assert.ok(response(operation("get", "/funnel"), "503").headers["Retry-After"]);
    assert.ok(doc.paths["/"].get.responses["503"].headers["Retry-After"]);
    assert.match(response(operation("put", "/goals"), "400").description, /`missing goals object`/);
    assert.deepEqual(doc.components.schemas.unknown_route.required, ["error", "route"]);
  });

  test("the data schemas name the API's fields: nullable where SQL gives null", () => {
    const data = (method: string, path: string) =>
      response(operation(method, path), "200").content["application/json"].schema.properties.data;
    const kpis = data("get", "/dashboard/kpis");
    assert.deepEqual(kpis.properties.leads, { type: "integer" });
    assert.deepEqual(kpis.properties.ticket_moyen, { type: ["number", "null"] });
    assert.equal(kpis.additionalProperties, false);
    const run = data("get", "/ads/rules/runs").items;
    assert.deepEqual(run.properties.ran_at, { type: "string", format: "date-time" });
    assert.deepEqual(data("post", "/creatives/requests/ack"), { type: "integer", minimum: 0 });
    // /touchpoints with an unknown kind: 200 with the error beside `data`.
    const feed = response(operation("get", "/touchpoints"), "200").content["application/json"].schema;
    assert.equal(feed.anyOf.length, 2);
    assert.deepEqual(feed.anyOf[1].required, ["data", "error", "touchpoints"]);
  });

  test("a copy-paste curl per operation", () => {
    for (const item of Object.values(doc.paths) as Json[]) {
      for (const op of Object.values(item) as Json[]) {
        assert.equal(op["x-codeSamples"][0].lang, "Shell", op.operationId);
        assert.match(op["x-codeSamples"][0].source, /^curl -s /);
      }
    }
    assert.equal(
      operation("get", "/dashboard/kpis")["x-codeSamples"][0].source,
      `curl -s -H "Authorization: Bearer $ASCRIBE_API_KEY" \\\n  'http://localhost:3000/api/v1/dashboard/kpis'`,
    );
    const goals = routes.find((r) => r.path === "/goals");
    assert.ok(goals);
    assert.equal(
      curlSample(goals, "PUT", "https://ascribe.example/api/v1"),
      [
        `curl -s -X PUT -H "Authorization: Bearer $ASCRIBE_API_KEY" \\`,
        `  -H 'Content-Type: application/json' \\`,
        `  -d '{"goals":[{"metric_key":"leads","target_value":100},{"metric_key":"revenue","target_value":50000}]}' \\`,
        `  'https://ascribe.example/api/v1/goals'`,
      ].join("\n"),
    );
    assert.equal(
      operation("get", "/journeys/contact")["x-codeSamples"][0].source,
      `curl -s -H "Authorization: Bearer $ASCRIBE_API_KEY" \\\n  'http://localhost:3000/api/v1/journeys/contact?email=lucas.durand%40example.com&pageviews=true'`,
    );
  });

  test("the front page holds authentication, scopes, limits and errors", () => {
    const text: string = doc.info.description;
    for (const heading of ["## Authentication", "## Scopes", "## Limits", "## Errors"]) {
      assert.ok(text.includes(heading), heading);
    }
    assert.ok(text.includes("`x-api-key: <API_KEY>`"));
    assert.ok(
      text.includes(
        "| `read:calls` | a contact's calls, call list, transcript, recording | GET `/contacts/calls`, GET `/calls`, GET `/calls/transcript`, GET `/calls/recording` |",
      ),
    );
    assert.ok(text.includes("| `/ads/rules/runs` `limit` | default 30, max 100 |"));
    assert.ok(text.includes("| `/contacts` `offset` | default 0 |"));
    assert.ok(text.includes("| 429 | `rate_limited` | `retry_after_seconds` |"));
    assert.ok(text.includes("600 requests per minute per key"));
    // Errors of other addresses (files, webhooks) are not the API's.
    assert.ok(!text.includes("invalid_signature"));
  });

  test("the index links the reference page and the document", async () => {
    const res = await ctx.app.inject({ url: "/api/v1" });
    assert.equal(res.json().data.reference, "http://localhost:3000/docs");
    assert.equal(res.json().data.openapi, "http://localhost:3000/api/v1/openapi.json");
  });
});

describe("response conformance (the test harness checks every answer against the document)", () => {
  test("a body that strays from its schema, or an undocumented status, is reported and fails the app's close", async () => {
    const db = await openTestDatabase();
    try {
      const wrong = defineRoute({
        methods: ["GET"],
        path: "/wrong",
        scope: "read:icp",
        input: z.object({}),
        output: z.object({ total: z.number() }),
        description: "Answers a text where the document says a number.",
        handler: async () => ({ total: "12" }) as unknown as { total: number },
      });
      const app = await createTestApp(db, { routes: [wrong] });
      const account = await seedAccount(db);
      const key = await account.key(["read:icp"]);
      const res = await app.inject({ url: "/api/v1/wrong", headers: bearer(key) });
      assert.equal(res.statusCode, 200);
      // Documented errors conform: a 401 and a 405 add nothing.
      assert.equal((await app.inject({ url: "/api/v1/wrong" })).statusCode, 401);
      assert.equal((await app.inject({ method: "DELETE", url: "/api/v1/wrong" })).statusCode, 405);
      assert.deepEqual(app.conformance.violations, [
        {
          method: "GET",
          url: "/api/v1/wrong",
          status: 200,
          problem: 'body does not fit the documented schema: /data/total must be number {"type":"number"}',
        },
      ]);
      await assert.rejects(app.close(), /1 response\(s\) do not conform to the OpenAPI document/);
      await app.audit.close();
    } finally {
      await db.close();
    }
  });
});
