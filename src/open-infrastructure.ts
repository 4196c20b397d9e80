/*
 * The infrastructure a service and a CLI command both open from the config: the database, the secret
 * box, stored files, the vendors' APIs, the ad network and the mailer. Apart from main.ts so that a
 * CLI command loads these and not the web application (routes, MCP, the HTTP server), which made
 * every command spend about 1.5 s of CPU starting.
 */
import { join } from "node:path";
import type { Config } from "./config.ts";
import type { SpendApis } from "./connectors/spend-sync.ts";
import { createSecretBox, loadOrCreateKeyring, type SecretBox } from "./crypto/secret-box.ts";
import { type Database, openEmbedded, openPostgres } from "./db/client.ts";
import { createSmtpMailer, type Mailer, printOnlyMailer } from "./people/mailer.ts";
import type { AdNetwork } from "./rules/ad-network.ts";
import { startFakeAdNetwork } from "./rules/fake-ad-network.ts";
import { createGraphApiNetwork } from "./rules/graph-api-network.ts";
import { narrowToPrivate } from "./storage/data-dir.ts";
import { createLocalObjectStore } from "./storage/local-store.ts";
import type { ObjectStore } from "./storage/object-store.ts";

export async function openDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    return openPostgres(config.databaseUrl, config.statementTimeoutMs, {
      queryTimeoutMs: config.queryTimeoutMs,
      connectTimeoutMs: config.connectTimeoutMs,
      poolMode: config.poolMode,
    });
  }
  const db = await openEmbedded(config.dataDir);
  // PGlite chmods some files itself, which no umask narrows (a new database's files 0666, the
  // relation cache it writes on opening 0644), inside folders the umask keeps 0700: narrowed here.
  await narrowToPrivate(join(config.dataDir, "pgdata"));
  return db;
}

/**
 * The secret box for secrets at rest: the keyring from ASCRIBE_SECRET_KEYS, else DATA_DIR/secret.key
 * (created on first start).
 */
export async function openSecrets(config: Config, warn: (message: string) => void): Promise<SecretBox> {
  if (config.databaseUrl && !config.secretKeys) {
    warn(
      "ASCRIBE_SECRET_KEYS is unset: secrets are sealed with DATA_DIR/secret.key, which other instances do not share",
    );
  }
  return createSecretBox(
    await loadOrCreateKeyring({ envValue: config.secretKeys, dataDir: config.dataDir, warn }),
  );
}

/** Stored files (recordings, uploads): DATA_DIR/files, served at {site_url}/files by signed URL. */
export function openFiles(config: Config, secrets: SecretBox, siteUrl: () => string): ObjectStore {
  return createLocalObjectStore({ root: join(config.dataDir, "files"), secrets, siteUrl });
}

/** The vendors' APIs spend sync reads (their test doubles: a loopback server's URL). */
export function spendApis(config: Config): SpendApis {
  return {
    metaApiUrl: config.metaApiUrl,
    googleAdsApiUrl: config.googleAdsApiUrl,
    googleTokenUrl: config.googleOauthTokenUrl,
  };
}

/**
 * The ad network armed rules act on: the Meta Marketing API, or (AD_NETWORK=fake, the demo) a
 * loopback fake of it started here, so the same client code runs.
 */
export async function openAdNetwork(config: Config): Promise<{ network: AdNetwork; close(): Promise<void> }> {
  if (config.adNetwork === "fake") {
    const fake = await startFakeAdNetwork({ defaultBudgetCents: 10_000 });
    const network = createGraphApiNetwork({ baseUrl: fake.url, tokenFor: async () => "fake-token" });
    return { network, close: () => fake.close() };
  }
  const token = config.metaAccessToken;
  const network = createGraphApiNetwork({ baseUrl: config.metaApiUrl, tokenFor: async () => token });
  return { network, close: async () => {} };
}

/** Invitations and resets go by SMTP when SMTP_URL is set; otherwise their links are only printed. */
export function openMailer(config: Config, siteUrl: () => string): Mailer {
  if (!config.smtpUrl) return printOnlyMailer;
  return createSmtpMailer(
    config.smtpUrl,
    config.smtpFrom ?? `Ascribe <no-reply@${new URL(siteUrl()).hostname}>`,
  );
}
