import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import pino from "pino";
import { createLogger } from "../../src/logger.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

/** Everything a logger writes, kept in memory. */
function captured() {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    stream,
    text: () => text,
    /** The parsed JSON lines. */
    lines: () =>
      text
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("the access log: one JSON line per request", () => {
  const log = captured();
  const t = useTestApp({ logger: pino({ level: "info" }, log.stream) });

  const requestLines = () => log.lines().filter((l) => l.msg === "request");

  test("method, route pattern, status, ms, key prefix and request id at info; never the key", async () => {
    const account = await seedAccount(t.db);
    const key = await account.key(["read:contacts"]);
    const before = requestLines().length;
    const r = await t.app.inject({
      method: "GET",
      url: "/api/v1/contacts?limit=2&search=ann%40example.com",
      headers: bearer(key),
    });
    assert.equal(r.statusCode, 200);

    const lines = requestLines().slice(before);
    assert.equal(lines.length, 1, "one line per request");
    const line = lines[0];
    assert.ok(line);
    assert.equal(line.level, 30); // info
    assert.equal(line.reqId, r.headers["x-request-id"]);
    assert.equal(line.method, "GET");
    assert.equal(line.route, "/api/v1/contacts");
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, "number");
    assert.ok((line.ms as number) >= 0);
    assert.equal(line.key_prefix, key.slice("svc_sk_live_".length, "svc_sk_live_".length + 8));
    // The query string (an email here) is not logged, and the key nowhere.
    assert.equal(log.text().includes("ann%40example.com"), false);
    assert.equal(log.text().includes(key), false);
    assert.equal(log.text().includes(key.slice(12)), false);
  });

  test("a refused key: the line has no key prefix, and the key appears nowhere", async () => {
    const account = await seedAccount(t.db);
    const key = await account.key(["read:contacts"]);
    await account.revoke(key);
    const unknown = `svc_sk_live_${"Z".repeat(32)}`;
    const before = requestLines().length;
    for (const presented of [key, unknown]) {
      const r = await t.app.inject({ method: "GET", url: "/api/v1/contacts", headers: bearer(presented) });
      assert.equal(r.statusCode, 401);
    }
    const lines = requestLines().slice(before);
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assert.equal(line.status, 401);
      assert.equal(line.route, "/api/v1/contacts");
      assert.equal("key_prefix" in line, false);
    }
    assert.equal(log.text().includes(key), false);
    assert.equal(log.text().includes(unknown), false);
    assert.equal(
      log.text().includes(key.slice(12, 20)),
      false,
      "a refused key's prefix is not logged either",
    );
  });

  test("unkeyed routes and unknown paths: the pattern, or (unmatched); no raw URL", async () => {
    const before = requestLines().length;
    await t.app.inject({ method: "GET", url: "/healthz" });
    await t.app.inject({ method: "GET", url: "/api/v1/no-such/4f1c2b9e" });
    const lines = requestLines().slice(before);
    assert.deepEqual(
      lines.map((l) => [l.method, l.route, l.status]),
      [
        ["GET", "/healthz", 200],
        ["GET", "(unmatched)", 404],
      ],
    );
    assert.equal(log.text().includes("4f1c2b9e"), false);
  });
});

describe("LOG_FORMAT", () => {
  test("json: one JSON object per line", () => {
    const out = captured();
    createLogger({ logLevel: "info", logFormat: "json" }, out.stream).info({ route: "/x" }, "request");
    assert.deepEqual(
      out.lines().map((l) => [l.level, l.msg, l.route]),
      [[30, "request", "/x"]],
    );
  });

  test("pretty: a readable line with the level and message, not JSON", () => {
    const out = captured();
    createLogger({ logLevel: "info", logFormat: "pretty" }, out.stream).info({ route: "/x" }, "request");
    const text = out.text();
    assert.match(text, /INFO/);
    assert.match(text, /request/);
    assert.match(text, /"route":\s?"\/x"/);
    assert.throws(() => JSON.parse(text));
    assert.equal(text.trim().split("\n").length, 1);
  });
});
