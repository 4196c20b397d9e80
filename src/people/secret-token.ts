import { createHash, randomBytes } from "node:crypto";

/** A random bearer secret (session cookie, one-time link, CSRF token): 32 bytes, base64url. */
export function newSecretToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What the database keeps of a secret token: its SHA-256, hex (a value RLS settings accept). */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Tokens we issue are exactly 43 base64url characters; anything else is not looked up. */
export function isWellFormedToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}
