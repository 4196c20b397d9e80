import { readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ToolDef, toolFor, toolsFor } from "../catalog/tools.ts";
import { ApiError } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import {
  type AuditTarget,
  auditRequest,
  authenticate,
  checkPlan,
  checkScope,
  meter,
  type PipelineDeps,
  runRoute,
  statusOf,
  validateInput,
} from "../http/pipeline.ts";
import type { KeyRecord } from "../queries/find-key-by-hash.ts";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";

export const MCP_PATH = "/mcp";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface McpRouteDeps extends PipelineDeps {
  routes: readonly RouteDef[];
  siteUrl: () => string;
  /** The app's in-flight tracking (a stop waits for running handlers). */
  tracked: (handler: Handler) => Handler;
}

/** What a tool call needs to run its route as the caller. */
interface Caller {
  record: KeyRecord;
  request: FastifyRequest;
  /** Called as a tool starts: the tool's route, not POST /mcp, meters and audits the request. */
  toolRuns(): void;
}

function instructions(record: KeyRecord): string {
  return [
    "Ascribe: the advertising, attribution and sales data of one account (the key's).",
    `Dates (from, to) are YYYY-MM-DD calendar days in the account's timezone (${record.timezone}), both inclusive; reports default to the 30 days ending today.`,
    `Money fields are amounts as recorded, unconverted (the account's currency is ${record.currency}); rates are fractions 0–1, pct_ fields 0–100.`,
    'Query parameters are strings (limit "50"); numbers and booleans are accepted and sent as text.',
    "A result is { data }; a refusal is a tool error whose `error` is the API's code (insufficient_scope names the `required` scope).",
  ].join(" ");
}

/** The registry route a JSON-RPC message runs as a tool, if it is a tool call. */
function calledTool(body: unknown, tools: ReadonlyMap<string, ToolDef>): ToolDef | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const message = body as { method?: unknown; params?: { name?: unknown } };
  if (message.method !== "tools/call" || typeof message.params?.name !== "string") return null;
  return tools.get(message.params.name) ?? null;
}

function parseBody(raw: unknown): unknown {
  if (typeof raw !== "string" || raw === "") return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** A GET route's arguments as its query would carry them: text, objects as JSON text. */
function queryOf(args: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    // Anything but a scalar is sent as JSON text, for the route to refuse with its own message.
    query[name] = typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  return query;
}

/**
 * A tool call, in process, through the route's own steps after the door: rate limit → scope →
 * validation → handler → barrier → redaction, audited as the route. A refusal is the route's
 * error body with its status.
 */
async function runTool(
  deps: McpRouteDeps,
  caller: Caller,
  tool: ToolDef,
  args: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { record, request } = caller;
  const target: AuditTarget = { method: tool.method, path: API_PREFIX + tool.path, scope: tool.route.scope };
  caller.toolRuns();
  let status = 200;
  try {
    await meter(deps, record, request);
    checkScope(record, tool.route.scope);
    const input = validateInput(tool.route, tool.method === "GET" ? queryOf(args) : args);
    return { status, body: await runRoute(tool.route, deps, record, input, deps.clock()) };
  } catch (err) {
    status = statusOf(err);
    if (err instanceof ApiError) return { status, body: err.body() };
    // Never echo internals: the detail goes to the log only (as the app's error handler does).
    request.log.error({ err, tool: tool.name }, "tool call failed");
    return { status, body: new ApiError("upstream_error").body() };
  } finally {
    auditRequest(deps, request, record, target, status);
  }
}

/**
 * One MCP server per request (stateless Streamable HTTP). Every tool call runs the real route in
 * process with the caller's key record, so scopes, rate limit, audit, barrier and redaction are the
 * REST API's own steps and nothing here re-implements them.
 */
function createServer(deps: McpRouteDeps, caller: Caller, allTools: ReadonlyMap<string, ToolDef>): Server {
  // The low-level Server, not McpServer: tools are per key and their schemas are JSON Schema
  // already, generated from the registry.
  const server = new Server(
    { name: "ascribe", version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: instructions(caller.record) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: toolsFor(deps.routes, caller.record.scopes, { manifest: false }).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: "object" },
      annotations: tool.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = allTools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    // A tool outside the key's scopes still runs its route, which answers insufficient_scope.
    const { status, body } = await runTool(deps, caller, tool, request.params.arguments ?? {});
    if (status >= 400) {
      const error = { ...body, status };
      return {
        isError: true,
        content: [{ type: "text", text: JSON.stringify(error) }],
        structuredContent: error,
      };
    }
    return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
  });
  return server;
}

function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || ["host", "content-length", "connection", "transfer-encoding"].includes(name))
      continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return headers;
}

/**
 * `{site_url}/mcp`: the MCP server over Streamable HTTP (stateless, JSON responses). Every request
 * presents the key like a REST call and passes the same key steps — failed-auth gate, key, plan
 * (the spec's paid-tier rule) and, except for a tool call, which its route counts, the rate limit —
 * and is audited as `POST /mcp` unless a route audited it.
 */
export function registerMcpRoute(app: FastifyInstance, deps: McpRouteDeps): void {
  // Every route's tool, whatever the key: a call outside its scopes gets the route's own refusal.
  const allTools = new Map(deps.routes.map(toolFor).map((tool) => [tool.name, tool]));
  const door: AuditTarget = { method: "POST", path: MCP_PATH, scope: "" };

  app.post(
    MCP_PATH,
    deps.tracked(async (request, reply) => {
      const record = await authenticate(deps, request, reply);
      const raw = typeof request.body === "string" ? request.body : "";
      const parsed = parseBody(raw);
      // A tool call is metered and audited once, as its route, when it runs; anything else here.
      const toolCall = calledTool(parsed, allTools) !== null;
      let toolRan = false;
      let admitted = false;
      let status = 200;
      try {
        checkPlan(record);
        admitted = true;
        if (!toolCall) await meter(deps, record, request);
        // Malformed JSON is the SDK's to answer (a JSON-RPC parse error); too deep a value is ours.
        const checked = readJsonBody(raw);
        if (!checked.ok && checked.reason === "depth") throw checked.error;
        const caller: Caller = { record, request, toolRuns: () => (toolRan = true) };
        const server = createServer(deps, caller, allTools);
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        try {
          await server.connect(transport);
          const response = await transport.handleRequest(
            new Request(deps.siteUrl() + MCP_PATH, {
              method: "POST",
              headers: webHeaders(request),
              body: raw,
            }),
            parsed === undefined ? {} : { parsedBody: parsed },
          );
          reply.code(response.status);
          response.headers.forEach((value, name) => {
            if (name !== "content-length") reply.header(name, value);
          });
          status = response.status;
          return await response.text();
        } finally {
          await transport.close();
          await server.close();
        }
      } catch (err) {
        status = statusOf(err);
        throw err;
      } finally {
        if (!toolRan) {
          // A tool call that never reached its tool still costs one request of the window.
          if (toolCall && admitted) await meter(deps, record, request).catch(() => {});
          auditRequest(deps, request, record, door, status);
        }
      }
    }),
  );
  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE). Every method
  // but POST is the app's 405 (`allowed: ["POST"]`), which the SDK's client takes to mean exactly that.
}
