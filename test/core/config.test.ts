import assert from "node:assert/strict";
import { resolve } from "node:path";
import { test } from "node:test";
import { loadConfig } from "../../src/config.ts";

test("defaults follow CONTRACT.md", () => {
  const config = loadConfig({}, true);
  assert.deepEqual(
    { ...config },
    {
      explicitlySet: [],
      port: 3000,
      host: "127.0.0.1",
      siteUrl: null,
      dataDir: resolve("./data"),
      databaseUrl: null,
      redisUrl: null,
      logLevel: "info",
      logFormat: "pretty",
      metricsPort: null,
      statementTimeoutMs: 15_000,
      queryTimeoutMs: 17_000,
      connectTimeoutMs: 5_000,
      poolMode: "session",
      secretKeys: null,
      smtpUrl: null,
      smtpFrom: null,
      rulesIntervalSeconds: 3600,
      adNetwork: "meta",
      metaApiUrl: "https://graph.facebook.com/v21.0",
      metaAccessToken: null,
      googleAdsApiUrl: "https://googleads.googleapis.com/v21",
      googleOauthTokenUrl: "https://oauth2.googleapis.com/token",
      spendSyncIntervalSeconds: 0,
      trustProxy: null,
      loadShedding: {
        maxEventLoopDelayMs: 1000,
        maxEventLoopUtilization: 0,
        retryAfterSeconds: 5,
        sampleIntervalMs: 500,
      },
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
    RULES_INTERVAL_SECONDS: "0",
    AD_NETWORK: "fake",
    META_ACCESS_TOKEN: "EAAB-token",
  });
  assert.equal(config.port, 0);
  assert.equal(config.rulesIntervalSeconds, 0);
  assert.equal(config.adNetwork, "fake");
  assert.equal(config.metaAccessToken, "EAAB-token");
  assert.equal(config.siteUrl, "https://track.example.com");
  assert.equal(config.databaseUrl, "postgres://u@h:5432/db");
  assert.equal(config.statementTimeoutMs, 15_000);
});

test("SPEND_SYNC_INTERVAL_SECONDS: off unless set; the spend APIs' URLs default to the vendors'", () => {
  const unset = loadConfig({});
  assert.equal(unset.spendSyncIntervalSeconds, 0);
  assert.equal(unset.googleAdsApiUrl, "https://googleads.googleapis.com/v21");
  assert.equal(unset.googleOauthTokenUrl, "https://oauth2.googleapis.com/token");
  const set = loadConfig({
    SPEND_SYNC_INTERVAL_SECONDS: "3600",
    GOOGLE_ADS_API_URL: "http://127.0.0.1:9/ads",
  });
  assert.equal(set.spendSyncIntervalSeconds, 3600);
  assert.equal(set.googleAdsApiUrl, "http://127.0.0.1:9/ads");
  assert.throws(() => loadConfig({ SPEND_SYNC_INTERVAL_SECONDS: "-1" }), /SPEND_SYNC_INTERVAL_SECONDS/);
});

test("LOG_FORMAT unset: pretty on a terminal, JSON lines for a service manager or a pipe", () => {
  assert.equal(loadConfig({}, true).logFormat, "pretty");
  assert.equal(loadConfig({}, false).logFormat, "json");
  assert.equal(loadConfig({ LOG_FORMAT: "pretty" }, false).logFormat, "pretty");
  assert.equal(loadConfig({ LOG_FORMAT: "json" }, true).logFormat, "json");
});

test("LOG_FORMAT and METRICS_PORT: json keeps stdout JSON; a port turns the metrics listener on", () => {
  const config = loadConfig({ LOG_FORMAT: "json", METRICS_PORT: "9464" });
  assert.equal(config.logFormat, "json");
  assert.equal(config.metricsPort, 9464);
  assert.equal(loadConfig({ METRICS_PORT: "0" }).metricsPort, 0);
  assert.throws(
    () => loadConfig({ LOG_FORMAT: "xml", METRICS_PORT: "70000" }),
    (err: Error) => /LOG_FORMAT:/.test(err.message) && /METRICS_PORT:/.test(err.message),
  );
});

test("PostgreSQL's client-side limits: the query timeout follows the statement timeout unless set", () => {
  const derived = loadConfig({ DB_STATEMENT_TIMEOUT_MS: "3000" });
  assert.equal(derived.queryTimeoutMs, 5_000);
  const set = loadConfig({ DB_QUERY_TIMEOUT_MS: "800", DB_CONNECT_TIMEOUT_MS: "400" });
  assert.equal(set.queryTimeoutMs, 800);
  assert.equal(set.connectTimeoutMs, 400);
  assert.throws(
    () => loadConfig({ DB_QUERY_TIMEOUT_MS: "soon", DB_CONNECT_TIMEOUT_MS: "5" }),
    (err: Error) => /DB_QUERY_TIMEOUT_MS:/.test(err.message) && /DB_CONNECT_TIMEOUT_MS:/.test(err.message),
  );
});

test("an invalid environment names every bad variable", () => {
  assert.throws(
    () => loadConfig({ PORT: "http", DATABASE_URL: "mysql://x", LOG_LEVEL: "loud", AD_NETWORK: "tiktok" }),
    (err: Error) =>
      /PORT:/.test(err.message) &&
      /AD_NETWORK:/.test(err.message) &&
      /DATABASE_URL: must start with postgres/.test(err.message) &&
      /LOG_LEVEL:/.test(err.message),
  );
});

test("DB_POOL_MODE: session by default, transaction behind a transaction-mode pooler, nothing else", () => {
  assert.equal(loadConfig({}).poolMode, "session");
  assert.equal(loadConfig({ DB_POOL_MODE: "transaction" }).poolMode, "transaction");
  assert.throws(() => loadConfig({ DB_POOL_MODE: "statement" }), /DB_POOL_MODE:/);
});

test("load shedding's limits are read; out of range is refused", () => {
  const config = loadConfig({
    LOAD_SHED_EVENT_LOOP_DELAY_MS: "0",
    LOAD_SHED_EVENT_LOOP_UTILIZATION: "0.95",
    LOAD_SHED_RETRY_AFTER_SECONDS: "2",
  });
  assert.deepEqual(config.loadShedding, {
    maxEventLoopDelayMs: 0,
    maxEventLoopUtilization: 0.95,
    retryAfterSeconds: 2,
    sampleIntervalMs: 500,
  });
  assert.throws(
    () => loadConfig({ LOAD_SHED_EVENT_LOOP_UTILIZATION: "1.5" }),
    /LOAD_SHED_EVENT_LOOP_UTILIZATION/,
  );
  assert.throws(() => loadConfig({ LOAD_SHED_EVENT_LOOP_DELAY_MS: "-1" }), /LOAD_SHED_EVENT_LOOP_DELAY_MS/);
  assert.throws(() => loadConfig({ LOAD_SHED_RETRY_AFTER_SECONDS: "0" }), /LOAD_SHED_RETRY_AFTER_SECONDS/);
});
