import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { sql } from "drizzle-orm";
import pg from "pg";
import pino, { type Logger } from "pino";
import { createAccount, setPlan } from "../../src/admin/accounts.ts";
import { createKey, revokeKey } from "../../src/admin/keys.ts";
import { buildApp } from "../../src/app.ts";
import type { KeyStore } from "../../src/auth/key-store.ts";
import type { GrantedScope } from "../../src/auth/scopes.ts";
import { createSecretBox, type SecretBox } from "../../src/crypto/secret-box.ts";
import { type Database, openEmbedded, openPostgres, rows } from "../../src/db/client.ts";
import { demoWav } from "../../src/demo/write.ts";
import { type AuditSink, createAuditWriter } from "../../src/http/audit.ts";
import type { LoadShedding } from "../../src/http/load-shedding.ts";
import type { Metrics } from "../../src/http/metrics.ts";
import { type CounterStore, createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import type { TrustProxy } from "../../src/http/trust-proxy.ts";
import { keyStoreFor } from "../../src/main.ts";
import type { Mailer } from "../../src/people/mailer.ts";
import { routes as defaultRoutes } from "../../src/routes/index.ts";
import type { RouteDef } from "../../src/routes/route-def.ts";
import { createLocalObjectStore } from "../../src/storage/local-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { migratedTemplate } from "./embedded-template.ts";
import { postgresTemplate } from "./postgres-template.ts";
import { checkResponsesAgainstOpenApi } from "./response-conformance.ts";

export const silentLogger = pino({ level: "silent" });

export const backend = process.env.DATABASE_URL ? "postgres" : "embedded";

/**
 * One migrated database per test file: an in-memory PGlite, or, with DATABASE_URL, a fresh
 * database on that server (a copy of a migrated template: postgres-template.ts), dropped afterwards
 * so runs never see each other's rows. Statements are cut after 5 s unless `statementTimeoutMs` says.
 */
export async function openTestDatabase(
  options: { statementTimeoutMs?: number } = {},
): Promise<Database & { url: string | null }> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const db = await openEmbedded(null, { loadDataDir: await migratedTemplate() });
    await db.migrate();
    return Object.assign(db, { url: null });
  }
  const name = `ascribe_test_${process.pid}_${randomUUID().slice(0, 8)}`;
  const template = await postgresTemplate(serverUrl);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database "${name}" template "${template}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), options.statementTimeoutMs ?? 5_000);
  await db.migrate();
  const closePool = db.close;
  return Object.assign(db, {
    url: url.toString(),
    async close() {
      await closePool();
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  });
}

/** A fixed keyring for tests: sealed values are reproducible across a test file's apps. */
export const testSecrets = createSecretBox([{ id: "test", key: Buffer.alloc(32, 9) }]);

export const TEST_SITE_URL = "http://localhost:3000";

/** The temporary folders of this process's test stores, removed when it exits (one listener). */
const testFileRoots: string[] = [];

/** A local object store in a fresh temporary folder (removed when the process exits). */
export function createTestFiles(clock?: () => Date): ObjectStore & { root: string } {
  const root = mkdtempSync(join(tmpdir(), "ascribe-files-"));
  if (testFileRoots.length === 0) {
    process.once("exit", () => {
      for (const made of testFileRoots) rmSync(made, { recursive: true, force: true });
    });
  }
  testFileRoots.push(root);
  const store = createLocalObjectStore({ root, secrets: testSecrets, siteUrl: () => TEST_SITE_URL, clock });
  return Object.assign(store, { root });
}

export interface TestAppOptions {
  secrets?: SecretBox;
  keys?: KeyStore;
  counters?: CounterStore;
  routes?: readonly RouteDef[];
  clock?: () => Date;
  audit?: AuditSink;
  files?: ObjectStore;
  /** Invitations and reset mails; none: links are only printed (the application says so). */
  mailer?: Mailer;
  /** TRUST_PROXY: requests come through a proxy that names the client in X-Forwarded-For. */
  trustProxy?: TrustProxy;
  /** The app's logger (the access log); silent unless given. */
  logger?: Logger;
  metrics?: Metrics;
  /** Load shedding's limits; none: off, as buildApp has it without them. */
  loadShedding?: LoadShedding;
}

/**
 * The app with the whole pipeline, as main.ts builds it. Every answer of an API route is checked
 * against the OpenAPI document of the same routes (response-conformance.ts): closing an app that
 * sent an undocumented status or body throws, listing them, so the test file fails.
 */
export async function createTestApp(db: Database, options: TestAppOptions = {}) {
  const audit = options.audit ?? createAuditWriter(db, silentLogger, { intervalMs: 50 });
  const files = options.files ?? createTestFiles(options.clock);
  const routes = options.routes ?? defaultRoutes;
  const app = await buildApp({
    db,
    secrets: options.secrets ?? testSecrets,
    keys: options.keys ?? keyStoreFor(db),
    counters: options.counters ?? createMemoryCounterStore(),
    audit,
    logger: options.logger ?? silentLogger,
    routes,
    files,
    siteUrl: () => TEST_SITE_URL,
    clock: options.clock,
    mailer: options.mailer,
    trustProxy: options.trustProxy,
    metrics: options.metrics,
    loadShedding: options.loadShedding,
  });
  const conformance = checkResponsesAgainstOpenApi(app, routes, TEST_SITE_URL);
  await app.ready();
  return Object.assign(app, { audit, files, conformance });
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * A test file's database and app: registers `before` (open both) and `after` (close both) hooks where
 * it is called. `db` and `app` are getters, set once the `before` hook has run.
 */
export function useTestApp(options: TestAppOptions = {}) {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: TestApp;
  before(async () => {
    db = await openTestDatabase();
    app = await createTestApp(db, options);
  });
  after(async () => {
    await app.close();
    await app.audit.close();
    await db.close();
  });
  return {
    get db() {
      return db;
    },
    get app() {
      return app;
    },
    /** A request to /api/v1{url} with a bearer key and, when given, a JSON body. */
    send(method: "GET" | "PUT" | "POST", url: string, key: string, body?: unknown) {
      return app.inject({
        method,
        url: `/api/v1${url}`,
        headers: body === undefined ? bearer(key) : { ...bearer(key), "content-type": "application/json" },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    },
    /** GET /api/v1{url} with a bearer key, on this file's app unless told. */
    async get(key: string, url: string, on: TestApp = app) {
      const r = await on.inject({ method: "GET", url: `/api/v1${url}`, headers: bearer(key) });
      return { status: r.statusCode, body: r.json() };
    },
  };
}

export interface SeededAccount {
  accountId: string;
  owner: string;
  clientKey: string;
  /** A new key of this account (created by its owner). */
  key(
    scopes?: GrantedScope[],
    options?: { expires?: "never" | "90d" | "1y"; createdAt?: Date },
  ): Promise<string>;
  revoke(key: string): Promise<void>;
  /** Keys are refused on the free plan: a free account's key was made before a downgrade. */
  setPlan(plan: "free" | "pro" | "business"): Promise<void>;
}

let accountCounter = 0;

/** A fresh account with an owner; each test makes its own so tests never share state. */
export async function seedAccount(
  db: Database,
  options: { timezone?: string; name?: string; owner?: string } = {},
): Promise<SeededAccount> {
  accountCounter += 1;
  const owner = options.owner ?? `owner${accountCounter}.${randomUUID().slice(0, 6)}@example.com`;
  const account = await createAccount(db, {
    name: options.name ?? `Account ${accountCounter}`,
    plan: "pro",
    timezone: options.timezone ?? "UTC",
    owner,
  });
  const seeded: SeededAccount = {
    accountId: account.id,
    owner,
    clientKey: account.client_key,
    async key(scopes = ["*"], keyOptions = {}) {
      const created = await createKey(
        db,
        { account: account.id, as: owner, name: "test", scopes, expires: keyOptions.expires ?? "never" },
        keyOptions.createdAt ?? new Date(),
      );
      return created.key;
    },
    async setPlan(plan) {
      await setPlan(db, { account: account.id, plan });
    },
    async revoke(key: string) {
      await revokeKey(db, { account: account.id, as: owner, key: key.slice(12, 20) });
    },
  };
  return seeded;
}

/**
 * Rate windows are aligned to the epoch (rate-limiter.ts): a test that counts up to a limit within
 * one window waits for the next window when the current one ends within `marginMs`, so its count
 * never starts over halfway.
 */
export async function awayFromWindowEdge(windowMs: number, marginMs = 5_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 10));
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

/**
 * A call of the account with an analysis and a stored WAV recording (`calls/<external id>.wav`),
 * written as the demo writes calls; returns its artifact_id.
 */
export async function seedRecordedCall(
  db: Database,
  files: ObjectStore,
  accountId: string,
  options: { externalId?: string; startsAt?: string; participants?: string[] } = {},
): Promise<number> {
  const externalId = options.externalId ?? `call-${randomUUID().slice(0, 8)}`;
  const path = `calls/${externalId}.wav`;
  const inserted = await db.admin(accountId, (tx) =>
    rows<{ artifact_id: number }>(
      tx,
      sql`insert into calls (account_id, external_id, starts_at, title, call_analysis_id,
                             participant_emails, audio_path, audio_content_type)
          values (${accountId}, ${externalId}, ${options.startsAt ?? new Date().toISOString()}::timestamptz,
                  'Recorded call', ${`ana-${externalId}`}, array(select jsonb_array_elements_text(${JSON.stringify(options.participants ?? [])}::jsonb)), ${path},
                  'audio/wav')
          returning artifact_id::float8 as artifact_id`,
    ),
  );
  await files.put(accountId, path, demoWav(1));
  const id = inserted[0]?.artifact_id;
  if (id === undefined) throw new Error("no call inserted");
  return id;
}

/** A query string good enough for each GET route to answer 200 (the security suite needs 2xx). */
export function sampleQuery(path: string, fixtures: { recordedCallId: number }): string {
  if (path === "/calls/recording") return `?id=${fixtures.recordedCallId}`;
  if (path === "/journeys/contact") return "?email=someone@example.com";
  return "";
}

/** An ad rule of the account (dry run, enabled); returns its id. */
export async function seedAdRule(
  db: Database,
  accountId: string,
  options: { ruleType?: string; params?: Record<string, unknown>; campaignId?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await db.admin(accountId, (tx) =>
    tx.execute(sql`
      insert into ad_rules (account_id, id, label, rule_type, platform, campaign_id, params)
      values (${accountId}, ${id}, 'Test rule', ${options.ruleType ?? "pause_cpl"}, 'meta',
              ${options.campaignId ?? "C1"}, ${JSON.stringify(options.params ?? { max_cpl: 50, days: 7 })}::jsonb)`),
  );
  return id;
}

/**
 * A body good enough for each write route to answer 2xx (the security suite needs it); `newRule`
 * makes a rule of the calling account, fresh each time since a delete is final.
 */
export async function sampleBody(
  path: string,
  fixtures: { newRule: () => Promise<string> },
): Promise<Record<string, unknown>> {
  switch (path) {
    case "/icp":
      return { icp: { industries: ["coaching"] } };
    case "/goals":
      return { goals: [{ metric_key: "leads", target_value: 10 }] };
    case "/sale-rule":
      return { sale_rule: { dedupe: "contact" } };
    case "/ads/rules/enable":
    case "/ads/rules/dry-run":
    case "/ads/rules/delete":
      return { rule_id: await fixtures.newRule() };
    case "/creatives/requests/ack":
      return { ids: [randomUUID()] };
    case "/creatives/upload-url":
      return { content_type: "image/png", label: "sample" };
    case "/creatives/import":
      return { external_ref: "sample", creative: { angle: "sample" } };
    default:
      return {};
  }
}
