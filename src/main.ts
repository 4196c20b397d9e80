import type { Logger } from "pino";
import { isEmptyInstance } from "./admin/accounts.ts";
import { lockDataDir, releaseDataDir, serveAdminCommands } from "./admin/admin-socket.ts";
import { settingValues } from "./admin/command-settings.ts";
import type { AdminContext } from "./admin/commands.ts";
import { DEMO_OWNER, seedDemo } from "./admin/demo.ts";
import { reinviteMember } from "./admin/members.ts";
import { buildApp } from "./app.ts";
import { createAdIndexCache } from "./attribution/ad-index-cache.ts";
import { createCachedKeyStore, type KeyStore } from "./auth/key-store.ts";
import type { Config } from "./config.ts";
import { scheduleSpendSync } from "./connectors/spend-schedule.ts";
import type { Database } from "./db/client.ts";
import { createAuditWriter } from "./http/audit.ts";
import { createMetrics, type Metrics, noMetrics } from "./http/metrics.ts";
import { listenForMetrics, type MetricsListener } from "./http/metrics-server.ts";
import { type CounterStore, createMemoryCounterStore } from "./http/rate-limiter.ts";
import { connectRedisCounters } from "./http/redis-counters.ts";
import {
  CONTACT_MAINTENANCE_INTERVAL_MS,
  scheduleContactMaintenance,
} from "./import/maintenance-schedule.ts";
import { collectServicesFor } from "./ingest/collect-services.ts";
import { createLogger } from "./logger.ts";
import {
  openAdNetwork,
  openDatabase,
  openFiles,
  openMailer,
  openSecrets,
  spendApis,
} from "./open-infrastructure.ts";
import { printOnlyMailer } from "./people/mailer.ts";
import { sessionStoreFor } from "./people/session-store.ts";
import { routes } from "./routes/index.ts";
import { API_PREFIX } from "./routes/route-def.ts";
import { scheduleRules } from "./rules/rule-schedule.ts";
import { secureDataDir } from "./storage/data-dir.ts";

export interface RunningService {
  siteUrl: string;
  baseUrl: string;
  /** The demo key, when this start seeded the demo account. */
  demoKey: string | null;
  /** The demo account and its owner's one-time sign-in link, when this start seeded it. */
  demo: { accountId: string; owner: string; signInUrl: string } | null;
  /** `http://HOST:METRICS_PORT/metrics`, or null without METRICS_PORT. */
  metricsUrl: string | null;
  stop(): Promise<void>;
}

/** Keys cached in process, dropped whenever the database announces a change (db.keyChanges). */
export function keyStoreFor(db: Database): KeyStore {
  return createCachedKeyStore(db, db.keyChanges());
}

/** Prometheus metrics and their own listener with METRICS_PORT; without it nothing is counted. */
export async function openMetrics(
  config: Config,
  db: Database,
): Promise<{ metrics: Metrics; listener: MetricsListener | null }> {
  if (config.metricsPort === null) return { metrics: noMetrics, listener: null };
  const poolStats = db.poolStats?.bind(db);
  const metrics = createMetrics(poolStats ? { pool: poolStats } : {});
  const listener = await listenForMetrics(metrics, { host: config.host, port: config.metricsPort });
  return { metrics, listener };
}

/**
 * Shared counters on Redis when REDIS_URL is set, falling back to this process's own while Redis is
 * unreachable; otherwise this process's own.
 */
async function openCounters(config: Config, logger: Logger): Promise<CounterStore> {
  if (!config.redisUrl) return createMemoryCounterStore();
  return connectRedisCounters(config.redisUrl, { logger });
}

/** Builds the dependencies from the config, starts listening, and returns how to stop. */
export async function startService(config: Config, logger: Logger = createLogger(config)) {
  // The embedded database is this process's alone: take DATA_DIR before opening it, and answer the
  // CLI's admin commands once the database is ready.
  let ready: (context: Omit<AdminContext, "progress">) => void = () => {};
  const lock = config.databaseUrl
    ? null
    : await lockDataDir(
        config.dataDir,
        serveAdminCommands(new Promise<Omit<AdminContext, "progress">>((resolve) => (ready = resolve))),
        {
          onRefused: () =>
            logger.warn("admin socket: refused a command from another user (not this one, not root)"),
        },
      );
  // Whatever was opened is closed again if the start fails half-way (a taken port, a refused
  // migration), so the process can exit with its one-line error.
  const opened: (() => Promise<void>)[] = [];
  if (lock) opened.push(() => releaseDataDir(lock));
  const undo = async () => {
    for (const close of opened.reverse()) await close().catch(() => {});
  };
  try {
    // Private before the keyring, the database and the files in it are opened (0700 / 0600).
    await secureDataDir(config.dataDir, (message) => logger.warn(message));
    const secrets = await openSecrets(config, (message) => logger.warn(message));
    const db = await openDatabase(config);
    opened.push(() => db.close());
    await db.migrate();
    const { metrics, listener: metricsListener } = await openMetrics(config, db);
    if (metricsListener) opened.push(() => metricsListener.close());
    let siteUrl = config.siteUrl ?? `http://localhost:${config.port}`;
    const files = openFiles(config, secrets, () => siteUrl);
    const mailer = openMailer(config, () => siteUrl);
    const adNetwork = await openAdNetwork(config);
    opened.push(() => adNetwork.close());
    ready({
      db,
      secrets,
      files,
      network: adNetwork.network,
      spendApis: spendApis(config),
      mailer,
      siteUrl: () => siteUrl,
      metrics,
      settings: (command) => settingValues(config, command, siteUrl),
    });
    const counters = await openCounters(config, logger);
    opened.push(() => counters.close());
    const audit = createAuditWriter(db, logger);
    // One per process: the beacons' writer and the webhooks resolve against the same cached indexes.
    const adIndexes = createAdIndexCache();
    opened.push(() => audit.close());
    const app = await buildApp({
      db,
      secrets,
      keys: keyStoreFor(db),
      counters,
      audit,
      logger,
      routes,
      files,
      siteUrl: () => siteUrl,
      mailer,
      sessions: sessionStoreFor(db),
      // Beacons: the production limits, account cache and group-commit writer for this database.
      collect: collectServicesFor(db, {}, adIndexes),
      adIndexes,
      trustProxy: config.trustProxy,
      metrics,
      // PostgreSQL only: the embedded database runs its queries on the event loop, so one long
      // query (the demo's seeding at start-up, a large report) reads as overload and the requests
      // queued behind it would be refused instead of served a moment later.
      loadShedding: db.kind === "postgres" ? config.loadShedding : undefined,
    });
    opened.push(() => app.close());
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    siteUrl = config.siteUrl ?? `http://localhost:${port}`;
    let demoKey: string | null = null;
    let demo: RunningService["demo"] = null;
    if (await isEmptyInstance(db)) {
      const seeded = await seedDemo(db, { seed: 1 }, undefined, { secrets, files });
      demoKey = seeded.key;
      const link = await reinviteMember(
        { db, mailer: printOnlyMailer, siteUrl: () => siteUrl },
        { account: seeded.account_id, email: DEMO_OWNER },
      );
      demo = { accountId: seeded.account_id, owner: DEMO_OWNER, signInUrl: link.invite_url };
    }

    const rules = scheduleRules(
      { db, network: adNetwork.network, clock: () => new Date(), metrics },
      { intervalMs: config.rulesIntervalSeconds * 1000, logger },
    );
    opened.push(() => rules.stop());
    const spendSync = scheduleSpendSync(
      { db, secrets, apis: spendApis(config) },
      { intervalMs: config.spendSyncIntervalSeconds * 1000, logger },
    );
    opened.push(() => spendSync.stop());
    const contactMaintenance = scheduleContactMaintenance(db, {
      intervalMs: CONTACT_MAINTENANCE_INTERVAL_MS,
      logger,
    });
    opened.push(() => contactMaintenance.stop());

    let stopping: Promise<void> | null = null;
    const stop = () => {
      // Stop accepting, let requests in flight finish, then flush the audit and close the database.
      stopping ??= (async () => {
        await rules.stop();
        await spendSync.stop();
        await contactMaintenance.stop();
        await app.close();
        await app.drain();
        await metricsListener?.close();
        await audit.close();
        await counters.close();
        await db.close();
        await adNetwork.close();
        if (lock) await releaseDataDir(lock);
      })();
      return stopping;
    };
    const metricsUrl = metricsListener?.url ?? null;
    const baseUrl = siteUrl + API_PREFIX;
    return { siteUrl, baseUrl, demoKey, demo, metricsUrl, stop } satisfies RunningService;
  } catch (err) {
    await undo();
    throw err;
  }
}
