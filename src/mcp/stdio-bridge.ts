import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { API_PREFIX } from "../routes/route-def.ts";
import { MCP_PATH } from "./mcp-route.ts";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** The remote MCP endpoint from what a user may paste: the API base, the site URL or /mcp itself. */
export function mcpEndpoint(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url: not a URL: ${url}`);
  }
  let path = parsed.pathname.replace(/\/+$/, "");
  if (path.endsWith(API_PREFIX)) path = path.slice(0, -API_PREFIX.length);
  if (!path.endsWith(MCP_PATH)) path += MCP_PATH;
  parsed.pathname = path;
  parsed.search = "";
  parsed.hash = "";
  return parsed;
}

/**
 * A refusal of the whole HTTP request (the key revoked or the account moved to the free plan since
 * the bridge started) as a tool error carrying the API's code, like the route refusals the server
 * already answers that way: the model reads the reason instead of a broken connection.
 */
function httpRefusal(err: unknown): CallToolResult | null {
  if (!(err instanceof StreamableHTTPError) || err.code === undefined || err.code < 400) return null;
  const text = err.message.slice(err.message.indexOf("{"));
  let body: Record<string, unknown> = { error: err.message };
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      body = parsed as Record<string, unknown>;
    }
  } catch {
    // Not the API's JSON body: keep the transport's message.
  }
  const error = { ...body, status: err.code };
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify(error) }],
    structuredContent: error,
  };
}

/** One line saying why the first connection failed: the API's refusal, or the network's reason. */
function connectFailure(err: unknown): string {
  if (err instanceof StreamableHTTPError) {
    return `HTTP ${err.code}: ${err.message.replace(/^(Streamable HTTP error: )?Error POSTing to endpoint: /, "")}`;
  }
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return `${err.message}${cause}`.replace(/\s+/g, " ");
  }
  return String(err);
}

export interface BridgeOptions {
  url: string;
  key: string;
}

/**
 * `ascribe mcp`: serves the remote service's MCP tools over stdio for desktop MCP clients. Lists and
 * calls go to the remote /mcp with the key; the remote decides everything (scopes, plan, limits).
 * Resolves when the desktop client closes stdin.
 */
export async function runStdioBridge(options: BridgeOptions): Promise<void> {
  const endpoint = mcpEndpoint(options.url);
  const remote = new Client({ name: "ascribe-mcp-bridge", version: VERSION });
  // Connecting first makes a wrong URL, a bad key or a free plan a one-line error at start.
  try {
    await remote.connect(
      new StreamableHTTPClientTransport(endpoint, {
        requestInit: { headers: { Authorization: `Bearer ${options.key}` } },
      }),
    );
  } catch (err) {
    throw new Error(`${endpoint.href}: ${connectFailure(err)}`);
  }

  const server = new Server(
    { name: "ascribe", version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: remote.getInstructions() },
  );
  server.setRequestHandler(ListToolsRequestSchema, (request) => remote.listTools(request.params));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return (await remote.callTool(request.params)) as CallToolResult;
    } catch (err) {
      const refusal = httpRefusal(err);
      if (refusal) return refusal;
      throw err;
    }
  });

  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  // The stdio transport does not end on end of input: the desktop client closing stdin is the stop.
  process.stdin.once("end", () => void server.close());
  await closed;
  await remote.close();
}
