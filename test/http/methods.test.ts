import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { routes } from "../../src/routes/index.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

const t = useTestApp();

/** One raw HTTP/1.1 request over a real socket; the status line and body of the answer. */
function rawRequest(port: number, head: string): Promise<{ status: number; body: string; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let raw = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      raw += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      resolve({ status, body: raw.slice(raw.indexOf("\r\n\r\n") + 4), raw });
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer to ${head}`)));
    socket.write(`${head} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  });
}

const UNLISTED = ["TRACE", "PROPFIND", "SEARCH", "PATCH", "DELETE", "MKCOL", "PURGE"] as const;

describe("methods a route does not serve → 405 with allowed; unknown routes → 404", () => {
  let key = "";
  before(async () => {
    key = await (await seedAccount(t.db)).key(["*"]);
  });

  test("every registry route: each unlisted method is a 405 naming the route's methods, with the usual headers", async () => {
    for (const route of routes) {
      const unlisted = [
        ...UNLISTED,
        ...(["GET", "PUT", "POST"] as const).filter((m) => !route.methods.includes(m)),
      ];
      for (const method of unlisted) {
        const res = await t.app.inject({ method, url: `/api/v1${route.path}`, headers: bearer(key) });
        const where = `${method} ${route.path}`;
        assert.equal(res.statusCode, 405, `${where}: ${res.body}`);
        assert.deepEqual(res.json(), { error: "method_not_allowed", allowed: [...route.methods] }, where);
        assert.equal(res.headers["cache-control"], "private, no-store", where);
        assert.equal(res.headers["x-content-type-options"], "nosniff", where);
      }
    }
  });

  test("routes outside the registry: the index, /docs, /tools, /mcp, collect, webhooks, track.js, pages", async () => {
    const expected: [string, string, string[]][] = [
      ["TRACE", "/api/v1", ["GET"]],
      ["DELETE", "/api/v1/", ["GET"]],
      ["PUT", "/api/v1/openapi.json", ["GET"]],
      ["TRACE", "/docs", ["GET"]],
      ["POST", "/api/v1/tools", ["GET"]],
      ["GET", "/mcp", ["POST"]],
      ["HEAD", "/mcp", ["POST"]],
      ["TRACE", "/mcp", ["POST"]],
      ["TRACE", "/api/collect", ["POST"]],
      ["GET", "/api/webhook/events", ["POST"]],
      ["GET", "/api/hooks/stripe/00000000-0000-4000-8000-000000000000", ["POST"]],
      ["GET", "/api/hooks/calendly/00000000-0000-4000-8000-000000000000", ["POST"]],
      ["PUT", "/api/hooks/calcom/00000000-0000-4000-8000-000000000000", ["POST"]],
      ["PROPFIND", "/api/track.js", ["GET"]],
      ["TRACE", "/sign-in", ["GET", "POST"]],
      ["DELETE", "/api/tls/ask", ["GET"]],
      ["TRACE", "/files/some/file.wav", ["GET"]],
    ];
    for (const [method, url, allowed] of expected) {
      const res = await t.app.inject({ method, url });
      assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
      if (method !== "HEAD")
        assert.deepEqual(res.json(), { error: "method_not_allowed", allowed }, `${method} ${url}`);
    }
  });

  test("unknown routes stay 404 whatever the method; HEAD of a GET route and CORS preflight still answer", async () => {
    for (const method of ["GET", "TRACE", "PROPFIND", "DELETE"] as const) {
      const res = await t.app.inject({ method, url: "/api/v1/nope?x=1" });
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), { error: "unknown_route", route: "/api/v1/nope" });
    }
    const head = await t.app.inject({ method: "HEAD", url: "/api/v1/events", headers: bearer(key) });
    assert.equal(head.statusCode, 200);
    const preflight = await t.app.inject({
      method: "OPTIONS",
      url: "/api/v1/events",
      headers: { origin: "https://example.com", "access-control-request-method": "GET" },
    });
    assert.equal(preflight.statusCode, 204);
  });

  describe("over a real socket (Node's parser first, then Fastify)", () => {
    let port = 0;
    before(async () => {
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      const address = t.app.server.address();
      port = typeof address === "object" && address !== null ? address.port : 0;
    });
    after(() => {
      // The harness closes the app (and with it the listening server).
    });

    test("TRACE, PROPFIND, SEARCH, CONNECT on a known route → 405; on an unknown one → 404", async () => {
      for (const method of ["TRACE", "PROPFIND", "SEARCH", "PURGE", "CONNECT"]) {
        const known = await rawRequest(port, `${method} /api/v1/events`);
        assert.equal(known.status, 405, `${method}: ${known.raw}`);
        assert.deepEqual(JSON.parse(known.body), { error: "method_not_allowed", allowed: ["GET"] }, method);
        assert.match(known.raw, /\r\nx-content-type-options: nosniff\r\n/i, method);
        const unknown = await rawRequest(port, `${method} /api/v1/nope`);
        assert.equal(unknown.status, 404, `${method}: ${unknown.raw}`);
      }
      // CONNECT's usual target is a host, never a route of ours.
      const tunnel = await rawRequest(port, "CONNECT example.com:443");
      assert.equal(tunnel.status, 404, tunnel.raw);
    });

    test("a method Node's parser does not know is refused by it with a 400, not left hanging", async () => {
      const res = await rawRequest(port, "BREW /api/v1/events");
      assert.equal(res.status, 400, res.raw);
    });
  });
});
