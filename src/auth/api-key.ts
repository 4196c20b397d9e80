import { hash, randomBytes } from "node:crypto";

export const KEY_PREFIX = "svc_sk_live_";
const KEY_PATTERN = /^svc_sk_live_[A-Za-z0-9_-]{32}$/;

export interface NewApiKey {
  /** The full key: shown once, never stored. */
  key: string;
  /** First eight characters after the prefix: names the key without revealing it. */
  prefix: string;
  /** SHA-256 hex of the full key: the only form stored. */
  hash: string;
}

export function generateApiKey(): NewApiKey {
  // 24 random bytes are exactly 32 base64url characters.
  const key = KEY_PREFIX + randomBytes(24).toString("base64url");
  return { key, prefix: displayPrefix(key), hash: hashApiKey(key) };
}

/** The eight characters after `svc_sk_live_` that name a key in listings and logs. */
export function displayPrefix(key: string): string {
  return key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 8);
}

/** Malformed keys are refused before any database lookup. */
export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/** SHA-256 hex of a key; one-shot (`crypto.hash`): half the cost of a Hash object, on every request. */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

export type KeyExpiry = "never" | "90d" | "1y";

export function expiryDate(expiry: KeyExpiry, now: Date): Date | null {
  if (expiry === "never") return null;
  const at = new Date(now);
  if (expiry === "90d") at.setUTCDate(at.getUTCDate() + 90);
  else at.setUTCFullYear(at.getUTCFullYear() + 1);
  return at;
}
