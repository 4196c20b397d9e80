import { resolve } from "node:path";
import { z } from "zod";
import { DEFAULT_LOAD_SHEDDING, type LoadShedding } from "./http/load-shedding.ts";
import { parseTrustProxy, type TrustProxy } from "./http/trust-proxy.ts";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  SITE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must start with postgres:// or postgresql://")
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must start with redis:// or rediss://")
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  /** Behind a reverse proxy: its hop count or addresses, so the client address is read from X-Forwarded-For. */
  TRUST_PROXY: z
    .string()
    .transform((value, ctx) => {
      const parsed = parseTrustProxy(value);
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    })
    .optional(),
  /**
   * `json`: stdout carries only pino's JSON lines (the start banner goes to stderr). Unset: `pretty`
   * on a terminal, `json` otherwise (a service manager or a pipe), where a line per request formatted
   * synchronously in the request thread would cost throughput for nobody to read.
   */
  LOG_FORMAT: z.enum(["pretty", "json"]).optional(),
  /** Prometheus `GET /metrics` on HOST:METRICS_PORT, apart from the site; unset: no listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Server-side statement timeout on PostgreSQL; PGlite cannot interrupt a query (single WASM thread). */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /** Client-side bound on one PostgreSQL query (a frozen server); unset: the statement timeout + 2 s. */
  DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).optional(),
  /** Bound on getting a PostgreSQL connection (pool wait or a new connection's start-up). */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** `transaction` behind a transaction-mode pooler (PgBouncer): no session state, no key cache. */
  DB_POOL_MODE: z.enum(["session", "transaction"]).default("session"),
  /** How often `ascribe serve` evaluates the enabled ad rules; 0: never (only `ascribe rules run`). */
  RULES_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** Where armed rules act: Meta's Marketing API, or a loopback fake of it started in-process (demo). */
  AD_NETWORK: z.enum(["meta", "fake"]).default("meta"),
  META_API_URL: z.url({ protocol: /^https?$/ }).default("https://graph.facebook.com/v21.0"),
  /** The Marketing API token (ads_management) armed rules act with; unset: their actions fail, recorded. */
  META_ACCESS_TOKEN: z.string().optional(),
  /** Ad-spend sync (docs/connectors.md): the Google Ads REST API and OAuth token endpoint; Meta's is META_API_URL. */
  GOOGLE_ADS_API_URL: z.url({ protocol: /^https?$/ }).default("https://googleads.googleapis.com/v21"),
  GOOGLE_OAUTH_TOKEN_URL: z.url({ protocol: /^https?$/ }).default("https://oauth2.googleapis.com/token"),
  /** How often `ascribe serve` syncs every Meta and Google connector's spend; 0: never (only `ascribe spend sync`). */
  SPEND_SYNC_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(0),
  /** Where invitations and password resets are mailed (smtp:// or smtps://); unset: links are only printed. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must start with smtp:// or smtps://")
    .optional(),
  SMTP_FROM: z.string().min(3).optional(),
  /** Load shedding (http/load-shedding.ts): mean event-loop delay past which requests get 503; 0: off. */
  LOAD_SHED_EVENT_LOOP_DELAY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_LOAD_SHEDDING.maxEventLoopDelayMs),
  /** Event-loop utilization (0–1) past which requests get 503; 0: off (the default). */
  LOAD_SHED_EVENT_LOOP_UTILIZATION: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_LOAD_SHEDDING.maxEventLoopUtilization),
  LOAD_SHED_RETRY_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(DEFAULT_LOAD_SHEDDING.retryAfterSeconds),
  /** Keyring for secrets at rest, `id:base64key[,…]`, first active; checked by loadOrCreateKeyring. */
  ASCRIBE_SECRET_KEYS: z.string().optional(),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  /** null: derived from the port actually bound (PORT=0 picks one). */
  readonly siteUrl: string | null;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /** null: no proxy is trusted and X-Forwarded-For is ignored. */
  readonly trustProxy: TrustProxy;
  readonly logFormat: "pretty" | "json";
  /** null: no metrics listener. */
  readonly metricsPort: number | null;
  readonly statementTimeoutMs: number;
  /** Past it a query is abandoned and its connection destroyed; above the statement timeout. */
  readonly queryTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly poolMode: "session" | "transaction";
  /** null: the keyring lives in DATA_DIR/secret.key, created on first start. */
  readonly secretKeys: string | null;
  /** 0: rules are evaluated only on demand. */
  readonly rulesIntervalSeconds: number;
  readonly adNetwork: "meta" | "fake";
  readonly metaApiUrl: string;
  readonly metaAccessToken: string | null;
  readonly googleAdsApiUrl: string;
  readonly googleOauthTokenUrl: string;
  /** 0: spend is synced only on demand. */
  readonly spendSyncIntervalSeconds: number;
  readonly smtpUrl: string | null;
  /** The sender of the application's mail; default `Ascribe <no-reply@{site host}>`. */
  readonly smtpFrom: string | null;
  readonly loadShedding: LoadShedding;
  /** The variables the environment set (not left to their default): what a caller asked for. */
  readonly explicitlySet: readonly string[];
}

/** The only reader of the environment. Throws one readable line per invalid variable. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  onTerminal: boolean = process.stdout.isTTY === true,
): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid environment: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  return Object.freeze({
    explicitlySet: Object.keys(cleaned).filter((name) => Object.hasOwn(envSchema.shape, name)),
    port: e.PORT,
    host: e.HOST,
    siteUrl: e.SITE_URL ? e.SITE_URL.replace(/\/+$/, "") : null,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL ?? null,
    redisUrl: e.REDIS_URL ?? null,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY ?? null,
    logFormat: e.LOG_FORMAT ?? (onTerminal ? "pretty" : "json"),
    metricsPort: e.METRICS_PORT ?? null,
    statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    queryTimeoutMs: e.DB_QUERY_TIMEOUT_MS ?? e.DB_STATEMENT_TIMEOUT_MS + 2_000,
    connectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
    poolMode: e.DB_POOL_MODE,
    secretKeys: e.ASCRIBE_SECRET_KEYS ?? null,
    rulesIntervalSeconds: e.RULES_INTERVAL_SECONDS,
    adNetwork: e.AD_NETWORK,
    metaApiUrl: e.META_API_URL,
    metaAccessToken: e.META_ACCESS_TOKEN ?? null,
    googleAdsApiUrl: e.GOOGLE_ADS_API_URL,
    googleOauthTokenUrl: e.GOOGLE_OAUTH_TOKEN_URL,
    spendSyncIntervalSeconds: e.SPEND_SYNC_INTERVAL_SECONDS,
    smtpUrl: e.SMTP_URL ?? null,
    smtpFrom: e.SMTP_FROM ?? null,
    loadShedding: {
      ...DEFAULT_LOAD_SHEDDING,
      maxEventLoopDelayMs: e.LOAD_SHED_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: e.LOAD_SHED_EVENT_LOOP_UTILIZATION,
      retryAfterSeconds: e.LOAD_SHED_RETRY_AFTER_SECONDS,
    },
  });
}
