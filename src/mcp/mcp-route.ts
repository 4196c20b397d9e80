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
import { readJsonBody } from "../http/json-body.ts";
import { type KeyedDeps, keyedHandler } from "../http/pipeline.ts";
import type { KeyRecord } from "../queries/find-key-by-hash.ts";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";

export const MCP_PATH = "/mcp";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface McpRouteDeps extends KeyedDeps {
  routes: readonly RouteDef[];
  siteUrl: () => string;
  /** The app's in-flight tracking (a stop waits for running handlers). */
  tracked: (handler: Handler) => Handler;
}

/** What a tool call needs to run its route as the caller. */
interface Caller {
  record: KeyRecord;
  /** The caller's own key headers, passed on unchanged: the route authenticates them itself. */
  headers: Record<string, string>;
  ip: string;
  /** The /mcp response reports what the route's rate limit left, since the route did the counting. */
  setRateLimitRemaining(remaining: number): void;
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

/** A JSON-RPC message that runs a registry route as a tool (counted and audited by that route). */
function isToolCall(body: unknown, toolNames: ReadonlySet<string>): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const message = body as { method?: unknown; params?: { name?: unknown } };
  return (
    message.method === "tools/call" &&
    typeof message.params?.name === "string" &&
    toolNames.has(message.params.name)
  );
}

function parseBody(raw: unknown): unknown {
  if (typeof raw !== "string" || raw === "") return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function queryString(args: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    // Anything but a scalar is sent as JSON text, for the route to refuse with its own message.
    params.append(name, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/**
 * One MCP server per request (stateless Streamable HTTP). Every tool call runs the real route
 * through the app with the caller's key, so scopes, plan, rate limit, audit, barrier and redaction
 * are the REST API's own and nothing here re-implements them.
 */
function createServer(
  app: FastifyInstance,
  deps: McpRouteDeps,
  caller: Caller,
  allTools: ReadonlyMap<string, ToolDef>,
  handedOff: () => void,
): Server {
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
    const args = request.params.arguments ?? {};
    const url = API_PREFIX + tool.path;
    // A tool outside the key's scopes is still dispatched: the route answers insufficient_scope.
    handedOff();
    const response = await app.inject(
      tool.method === "GET"
        ? { method: "GET", url: url + queryString(args), headers: caller.headers, remoteAddress: caller.ip }
        : {
            method: tool.method,
            url,
            headers: { ...caller.headers, "content-type": "application/json" },
            payload: JSON.stringify(args),
            remoteAddress: caller.ip,
          },
    );
    const remaining = Number(response.headers["x-ratelimit-remaining"]);
    if (Number.isInteger(remaining)) caller.setRateLimitRemaining(remaining);
    const body = parseBody(response.body);
    const structured =
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : { error: "upstream_error" };
    if (response.statusCode >= 400) {
      const error = { ...structured, status: response.statusCode };
      return {
        isError: true,
        content: [{ type: "text", text: JSON.stringify(error) }],
        structuredContent: error,
      };
    }
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
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

/** The caller's key headers, as they came, for the routes its tool calls run. */
function keyHeaders(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["authorization", "x-api-key"]) {
    const value = request.headers[name];
    if (typeof value === "string") out[name] = value;
  }
  return out;
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
  const toolNames = new Set(allTools.keys());
  const mayHandOff = (request: FastifyRequest) => isToolCall(parseBody(request.body), toolNames);

  app.post(
    MCP_PATH,
    deps.tracked(
      keyedHandler(deps, { scope: null, mayHandOff }, async ({ record, request, reply, handedOff }) => {
        // Malformed JSON is the SDK's to answer (a JSON-RPC parse error); too deep a value is ours.
        const checked = readJsonBody(typeof request.body === "string" ? request.body : "");
        if (!checked.ok && checked.reason === "depth") throw checked.error;
        const caller: Caller = {
          record,
          headers: keyHeaders(request),
          ip: request.ip,
          setRateLimitRemaining: (remaining) => {
            request.ascribe.rateLimitRemaining = remaining;
          },
        };
        const server = createServer(app, deps, caller, allTools, handedOff);
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        try {
          await server.connect(transport);
          const raw = typeof request.body === "string" ? request.body : "";
          const parsed = parseBody(raw);
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
          return await response.text();
        } finally {
          await transport.close();
          await server.close();
        }
      }),
    ),
  );
  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE). Every method
  // but POST is the app's 405 (`allowed: ["POST"]`), which the SDK's client takes to mean exactly that.
}
