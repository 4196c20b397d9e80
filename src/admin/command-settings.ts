import { createHash } from "node:crypto";
import type { Config } from "../config.ts";

/*
 * A command the running server carries out (the embedded database's admin socket) runs with the
 * server's configuration, not with the environment of the shell that typed it. The server answers
 * with the settings the command depended on, and the CLI names each one the caller set differently.
 */

/** The environment variables whose value can change what an admin command does. */
export type SettingName =
  | "AD_NETWORK"
  | "META_API_URL"
  | "META_ACCESS_TOKEN"
  | "GOOGLE_ADS_API_URL"
  | "GOOGLE_OAUTH_TOKEN_URL"
  | "SITE_URL"
  | "SMTP_URL"
  | "SMTP_FROM"
  | "ASCRIBE_SECRET_KEYS";

/** Values as compared: secrets as a fingerprint, never themselves; null when unset. */
export type SettingValues = Partial<Record<SettingName, string | null>>;

const SECRET: ReadonlySet<SettingName> = new Set(["META_ACCESS_TOKEN", "SMTP_URL", "ASCRIBE_SECRET_KEYS"]);

const INVITATIONS: readonly SettingName[] = ["SITE_URL", "SMTP_URL", "SMTP_FROM"];

/** What each command depends on; a command not listed depends on none of them. */
const COMMAND_SETTINGS: Readonly<Record<string, readonly SettingName[]>> = {
  "rules.run": ["AD_NETWORK", "META_API_URL", "META_ACCESS_TOKEN"],
  "accounts.create": INVITATIONS,
  "members.add": INVITATIONS,
  "users.invite": INVITATIONS,
  "accounts.webhook-secret": ["ASCRIBE_SECRET_KEYS"],
  demo: ["ASCRIBE_SECRET_KEYS"],
  import: ["ASCRIBE_SECRET_KEYS"],
  "connectors.add": ["SITE_URL", "ASCRIBE_SECRET_KEYS"],
  "connectors.list": ["SITE_URL"],
  "connectors.test": ["ASCRIBE_SECRET_KEYS"],
  "spend.sync": ["META_API_URL", "GOOGLE_ADS_API_URL", "GOOGLE_OAUTH_TOKEN_URL", "ASCRIBE_SECRET_KEYS"],
};

export function settingsOf(command: string): readonly SettingName[] {
  return Object.hasOwn(COMMAND_SETTINGS, command) ? (COMMAND_SETTINGS[command] ?? []) : [];
}

function read(config: Config, name: SettingName, siteUrl: string | null): string | null {
  switch (name) {
    case "AD_NETWORK":
      return config.adNetwork;
    case "META_API_URL":
      return config.metaApiUrl;
    case "META_ACCESS_TOKEN":
      return config.metaAccessToken;
    case "GOOGLE_ADS_API_URL":
      return config.googleAdsApiUrl;
    case "GOOGLE_OAUTH_TOKEN_URL":
      return config.googleOauthTokenUrl;
    case "SITE_URL":
      return siteUrl;
    case "SMTP_URL":
      return config.smtpUrl;
    case "SMTP_FROM":
      return config.smtpFrom;
    case "ASCRIBE_SECRET_KEYS":
      return config.secretKeys;
  }
}

function shown(name: SettingName, value: string | null): string | null {
  if (value === null || !SECRET.has(name)) return value;
  return `sha256:${createHash("sha256").update(value).digest("hex").slice(0, 12)}`;
}

/** The values a command ran with; `siteUrl`: the address its links start with. */
export function settingValues(
  config: Config,
  command: string,
  siteUrl: string | null = config.siteUrl,
): SettingValues {
  return Object.fromEntries(
    settingsOf(command).map((name) => [name, shown(name, read(config, name, siteUrl))]),
  );
}

export interface SettingDifference {
  name: SettingName;
  /** What the command ran with (the server's). */
  used: string | null;
  /** What the caller's environment set. */
  yours: string | null;
}

/**
 * The settings the caller set in its own environment (`config.explicitlySet`) to something else than
 * what the server used. A setting the caller left unset is the instance's to decide: not a difference.
 */
export function differingSettings(caller: Config, command: string, used: SettingValues): SettingDifference[] {
  const mine = settingValues(caller, command);
  return settingsOf(command)
    .filter((name) => caller.explicitlySet.includes(name) && name in used)
    .map((name) => ({ name, used: used[name] ?? null, yours: mine[name] ?? null }))
    .filter((d) => d.used !== d.yours);
}

/** One line naming each difference and the value used (a secret's values are not shown). */
export function describeDifferences(differences: readonly SettingDifference[]): string {
  const each = differences.map((d) =>
    SECRET.has(d.name)
      ? `${d.name} (the server's, not yours; values not shown)`
      : `${d.name}=${d.used ?? "(unset)"} (yours: ${d.yours ?? "(unset)"})`,
  );
  return `carried out by the running server with its own settings: ${each.join(", ")}; set them in the server's environment to change them`;
}
