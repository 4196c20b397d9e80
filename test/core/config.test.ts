import assert from "node:assert/strict";
import { resolve } from "node:path";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";

test("defaults follow CONTRACT.md", () => {
  const config = loadConfig({});
  assert.deepEqual(
    { ...config },
    {
      port: 3000,
      host: "127.0.0.1",
      siteUrl: null,
      dataDir: resolve("./data"),
      databaseUrl: null,
      redisUrl: null,
      logLevel: "info",
      statementTimeoutMs: 15_000,
      secretKeys: null,
    },
  );
  assert.ok(Object.isFrozen(config));
});

test("values are read and checked; empty variables count as unset", () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "0.0.0.0",
    SITE_URL: "https://track.example.com/",
    DATA_DIR: "/tmp/x",
    DATABASE_URL: "postgres://u@h:5432/db",
    REDIS_URL: "redis://127.0.0.1:6379",
    LOG_LEVEL: "warn",
    DB_STATEMENT_TIMEOUT_MS: "",
  });
  assert.equal(config.port, 0);
  assert.equal(config.siteUrl, "https://track.example.com");
  assert.equal(config.databaseUrl, "postgres://u@h:5432/db");
  assert.equal(config.statementTimeoutMs, 15_000);
});

test("an invalid environment names every bad variable", () => {
  assert.throws(
    () => loadConfig({ PORT: "http", DATABASE_URL: "mysql://x", LOG_LEVEL: "loud" }),
    (err: Error) =>
      /PORT:/.test(err.message) &&
      /DATABASE_URL: must start with postgres/.test(err.message) &&
      /LOG_LEVEL:/.test(err.message),
  );
});
