import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mcpEndpoint } from "../../src/mcp/stdio-bridge.ts";
import { createTestApp, openTestDatabase, seedAccount, type TestApp } from "../helpers/harness.ts";
import { ROOT } from "../helpers/spawn-service.ts";

/*
 * `ascribe mcp --url … --key …` spawned as a desktop MCP client would, driven by the SDK's stdio
 * client: the bridge lists and calls the remote server's tools and answers over stdin/stdout.
 */

const BIN = join(ROOT, "bin", "ascribe.js");
// Spawning node with tsx takes seconds on a loaded machine.
const TIMEOUT = { timeout: 120_000 };

let db: Awaited<ReturnType<typeof openTestDatabase>>;
let app: TestApp;
let siteUrl: string;

before(async () => {
  db = await openTestDatabase();
  app = await createTestApp(db);
  await app.listen({ port: 0, host: "127.0.0.1" });
  siteUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

/** The environment of a spawned CLI: the test runner's own marker must not leak into it. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== "NODE_TEST_CONTEXT") env[name] = value;
  }
  return env;
}

describe("ascribe mcp: the stdio bridge", () => {
  test("lists the key's tools, calls a write and a read tool, and relays a refusal", TIMEOUT, async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp", "write:icp"]);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--url", `${siteUrl}/api/v1`, "--key", key],
      env: childEnv(),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "desktop-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      assert.equal(client.getServerVersion()?.name, "ascribe");
      assert.match(client.getInstructions() ?? "", /YYYY-MM-DD/);

      const listed = await client.listTools();
      assert.deepEqual(
        listed.tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint]),
        [
          ["get_icp_criteria", true],
          ["set_icp_criteria", false],
        ],
      );

      const written = await client.callTool({
        name: "set_icp_criteria",
        arguments: { icp: { industries: ["real estate training"] } },
      });
      assert.deepEqual(written.structuredContent, { data: { success: true } });
      const read = await client.callTool({ name: "get_icp_criteria", arguments: {} });
      assert.deepEqual(read.structuredContent, { data: { industries: ["real estate training"] } });

      const refused = await client.callTool({ name: "get_funnel", arguments: {} });
      assert.equal(refused.isError, true);
      assert.deepEqual(refused.structuredContent, {
        error: "insufficient_scope",
        required: "read:funnel",
        status: 403,
      });

      // Revoked while the bridge runs: the remote's 401 comes back as a tool error with its code.
      await account.revoke(key);
      const revoked = await client.callTool({ name: "get_icp_criteria", arguments: {} });
      assert.equal(revoked.isError, true);
      assert.deepEqual(revoked.structuredContent, { error: "invalid_or_missing_api_key", status: 401 });
    } finally {
      await client.close();
    }
    assert.equal(stderr, "");
  });

  test("a bad key: the bridge stops at once with a one-line error naming the refusal", TIMEOUT, async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, "mcp", "--url", siteUrl, "--key", `svc_sk_live_${"A".repeat(32)}`],
        { env: childEnv(), timeout: 60_000 },
        (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr });
        },
      );
      child.stdin?.end();
    });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(
      result.stderr,
      `ascribe: ${siteUrl}/mcp: HTTP 401: {"error":"invalid_or_missing_api_key"}\n`,
    );
  });

  test("--url may be the API base, the site URL or the /mcp URL itself", () => {
    for (const url of [
      "https://ascribe.example/api/v1",
      "https://ascribe.example/api/v1/",
      "https://ascribe.example",
      "https://ascribe.example/mcp",
    ]) {
      assert.equal(mcpEndpoint(url).href, "https://ascribe.example/mcp", url);
    }
    assert.equal(mcpEndpoint("http://host:8080/prefix/api/v1").href, "http://host:8080/prefix/mcp");
    assert.throws(() => mcpEndpoint("not a url"), /--url: not a URL/);
  });
});
