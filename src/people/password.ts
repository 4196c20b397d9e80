import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Passwords are hashed with scrypt (node:crypto, no native build). The parameters are stored with
 * the hash, so a later increase applies to new passwords without invalidating old ones.
 * N=2^15, r=8, p=3 is one of OWASP's equivalent scrypt settings (32 MiB, ~100 ms here).
 */
const COST = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_LENGTH = 32;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** A malformed or missing hash verifies nothing. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = stored?.split("$") ?? [];
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (!N || !r || !p) return false;
  const expected = Buffer.from(parts[5] ?? "", "base64url");
  const key = await derive(password, Buffer.from(parts[4] ?? "", "base64url"), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Spent on an unknown email so that a wrong address takes as long as a wrong password (no account
 * enumeration by timing).
 */
const DECOY_HASH = hashPassword(randomBytes(16).toString("hex"));
export async function spendDecoy(password: string): Promise<void> {
  await verifyPassword(password, await DECOY_HASH);
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}
