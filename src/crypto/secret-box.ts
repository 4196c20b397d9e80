import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { createPrivateFile } from "../storage/private-file.ts";

/*
 * Secrets at rest (ad-network access tokens, webhook signing secrets) are stored as sealed text
 * tokens, AES-256-GCM, never as plaintext:
 *
 *   v1.<key id>.<base64url 12-byte IV>.<base64url ciphertext || 16-byte tag>
 *
 * The caller's `context` (e.g. "pixel:<account_id>:<pixel_id>") is the additional authenticated
 * data, so a token copied into another row or account does not open there. The key id names which
 * key of the keyring sealed it, so keys can be rotated: new tokens are sealed with the active key,
 * old ones still open with the key they name. The version prefix leaves room for another format.
 */

export interface SecretKey {
  /** Short and not secret: it is written into every token. [a-z0-9]{1,16}. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
  /**
   * A MAC of `message` for one `purpose` (e.g. "file-url"): `<key id>.<base64url HMAC-SHA256>`, under
   * a key derived (HKDF) from the active key, so a signature made for one purpose is worthless for
   * another and keys rotate like sealed secrets do.
   */
  sign(purpose: string, message: string): string;
  /** Whether `signature` is `sign(purpose, message)` under any key of the keyring (constant time). */
  verify(purpose: string, message: string, signature: string): boolean;
}

export type SecretBoxFailure = "malformed" | "unsupported-version" | "unknown-key" | "not-authentic";

/** Why a token did not open. The message never carries plaintext, key material or the context. */
export class SecretBoxError extends Error {
  readonly reason: SecretBoxFailure;
  constructor(reason: SecretBoxFailure, message: string) {
    super(message);
    this.name = "SecretBoxError";
    this.reason = reason;
  }
}

const VERSION = "v1";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION_PATTERN = /^v[0-9]{1,3}$/;
const KEY_ID_PATTERN = /^[a-z0-9]{1,16}$/;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

/** The env variable the keyring is read from; named in errors so operators know what to fix. */
export const SECRET_KEYS_ENV = "ASCRIBE_SECRET_KEYS";

/** Node decodes base64 leniently (skips stray characters): only a canonical encoding is accepted. */
function decodeBase64url(text: string): Buffer | null {
  if (!BASE64URL_PATTERN.test(text)) return null;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : null;
}

function decodeBase64(text: string): Buffer | null {
  if (!BASE64_PATTERN.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : null;
}

/**
 * `randomIv` exists for the known-answer test only; production code leaves it alone. A source that
 * repeats an IV under one key breaks GCM entirely.
 */
export function createSecretBox(
  keys: readonly SecretKey[],
  activeId?: string,
  randomIv: () => Buffer = () => randomBytes(IV_BYTES),
): SecretBox {
  const byId = new Map<string, Buffer>();
  for (const [index, { id, key }] of keys.entries()) {
    if (!KEY_ID_PATTERN.test(id)) throw new Error(`secret key ${index + 1}: id must be 1-16 of a-z, 0-9`);
    if (byId.has(id)) throw new Error(`secret key id "${id}" appears twice`);
    if (key.length !== KEY_BYTES) throw new Error(`secret key "${id}" is ${key.length} bytes; expected 32`);
    // A copy, so a caller reusing its buffer cannot change the key under us.
    byId.set(id, Buffer.from(key));
  }
  const first = keys[0];
  if (!first) throw new Error("secret keyring is empty");
  const sealId = activeId ?? first.id;
  const sealKey = byId.get(sealId);
  if (!sealKey) throw new Error(`active secret key id "${sealId}" is not in the keyring`);

  const macKeys = new Map<string, Buffer>();
  const macKey = (id: string, key: Buffer, purpose: string) => {
    const name = `${id}\u0000${purpose}`;
    let derived = macKeys.get(name);
    if (!derived) {
      derived = Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `ascribe mac ${purpose}`, KEY_BYTES));
      macKeys.set(name, derived);
    }
    return derived;
  };
  const mac = (id: string, key: Buffer, purpose: string, message: string) =>
    createHmac("sha256", macKey(id, key, purpose))
      .update(message, "utf8")
      .digest();

  return {
    sign(purpose, message) {
      return `${sealId}.${mac(sealId, sealKey, purpose, message).toString("base64url")}`;
    },

    verify(purpose, message, signature) {
      const dot = signature.indexOf(".");
      const key = dot > 0 ? byId.get(signature.slice(0, dot)) : undefined;
      const given = decodeBase64url(signature.slice(dot + 1));
      if (!key || !given || given.length !== 32) return false;
      return timingSafeEqual(given, mac(signature.slice(0, dot), key, purpose, message));
    },

    seal(plaintext, context) {
      const iv = randomIv();
      if (iv.length !== IV_BYTES) throw new Error(`IV must be ${IV_BYTES} bytes`);
      const cipher = createCipheriv("aes-256-gcm", sealKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, sealId, iv.toString("base64url"), body.toString("base64url")].join(".");
    },

    open(sealed, context) {
      // Only a version tag, or a key id once the whole token has its shape, is ever echoed: a
      // plaintext passed here by mistake must not end up in an error message or a log.
      const parts = sealed.split(".");
      const [version = "", id = "", ivText = "", bodyText = ""] = parts;
      // Checked before the shape: a later version may not have this version's shape.
      if (version !== VERSION && VERSION_PATTERN.test(version) && parts.length > 1) {
        throw new SecretBoxError("unsupported-version", `sealed secret has unsupported version "${version}"`);
      }
      const iv = decodeBase64url(ivText);
      const body = decodeBase64url(bodyText);
      if (
        parts.length !== 4 ||
        version !== VERSION ||
        !KEY_ID_PATTERN.test(id) ||
        !iv ||
        iv.length !== IV_BYTES ||
        !body ||
        body.length < TAG_BYTES
      ) {
        throw new SecretBoxError("malformed", "sealed secret is malformed");
      }
      const key = byId.get(id);
      if (!key) {
        throw new SecretBoxError(
          "unknown-key",
          `sealed secret names key id "${id}", which is not in the keyring`,
        );
      }
      const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        const plain = Buffer.concat([
          decipher.update(body.subarray(0, body.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return plain.toString("utf8");
      } catch {
        throw new SecretBoxError(
          "not-authentic",
          "sealed secret failed authentication (tampered, sealed for another context, or another key)",
        );
      }
    },
  };
}

function newKeyId(): string {
  // "k" + 8 hex digits: unique enough among the handful of keys a keyring ever holds.
  return `k${randomBytes(4).toString("hex")}`;
}

/** A fresh `id:base64key` entry for ASCRIBE_SECRET_KEYS; prepend it to rotate. */
export function generateKeyringValue(): string {
  return `${newKeyId()}:${randomBytes(KEY_BYTES).toString("base64")}`;
}

/** Validates one keyring entry. Messages name the entry, never the key material. */
function checkEntry(where: string, id: string, keyText: string, seen: Set<string>): SecretKey {
  if (!KEY_ID_PATTERN.test(id)) throw new Error(`${where}: key id must be 1-16 characters of a-z and 0-9`);
  if (seen.has(id)) throw new Error(`${where}: duplicate key id "${id}"`);
  seen.add(id);
  const key = decodeBase64(keyText);
  if (!key) throw new Error(`${where} (id "${id}"): key is not valid padded base64`);
  if (key.length !== KEY_BYTES) {
    throw new Error(`${where} (id "${id}"): key is ${key.length} bytes; expected ${KEY_BYTES}`);
  }
  return { id, key };
}

function parseKeyringValue(value: string): SecretKey[] {
  const entries = value.split(",").map((entry) => entry.trim());
  if (entries.every((entry) => entry === "")) {
    throw new Error(`${SECRET_KEYS_ENV} is empty; expected id:base64key[,id:base64key...]`);
  }
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const where = `${SECRET_KEYS_ENV} entry ${index + 1}`;
    if (entry === "") throw new Error(`${where} is empty`);
    const colon = entry.indexOf(":");
    if (colon < 0) throw new Error(`${where}: expected id:base64key`);
    return checkEntry(where, entry.slice(0, colon), entry.slice(colon + 1), seen);
  });
}

function parseKeyFile(path: string, text: string): SecretKey[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not valid JSON`);
  }
  const list = typeof data === "object" && data !== null && "keys" in data ? data.keys : undefined;
  if (!Array.isArray(list) || list.length === 0)
    throw new Error(`${path}: expected { "keys": [{ "id", "key" }] }`);
  const seen = new Set<string>();
  return list.map((entry: unknown, index) => {
    const where = `${path} key ${index + 1}`;
    if (typeof entry !== "object" || entry === null || !("id" in entry) || !("key" in entry)) {
      throw new Error(`${where}: expected { "id", "key" }`);
    }
    const { id, key } = entry;
    if (typeof id !== "string" || typeof key !== "string")
      throw new Error(`${where}: id and key must be strings`);
    return checkEntry(where, id, key, seen);
  });
}

export const KEY_FILE_NAME = "secret.key";

/**
 * Reads the key file through one handle, so the permissions checked are those of the file read.
 * Writable by group or others: refused, since whoever can replace the key decides what new secrets
 * are sealed with. Readable by them: used, with a warning, since refusing would stop a service whose
 * volume was merely copied carelessly. Returns null when there is no file yet.
 */
async function readKeyFile(path: string, warn: (message: string) => void): Promise<SecretKey[] | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    const { mode } = await handle.stat();
    if (process.platform !== "win32") {
      if (mode & 0o022) {
        throw new Error(`${path} is writable by group or others; run chmod 600 on it`);
      }
      if (mode & 0o044) warn(`${path} is readable by group or others; run chmod 600 on it`);
    }
    return parseKeyFile(path, await handle.readFile("utf8"));
  } finally {
    await handle.close();
  }
}

/**
 * Writes a fresh one-key file unless one exists: when two processes start at once, the first file
 * wins and the other reads the winner's key.
 */
async function createKeyFile(path: string): Promise<void> {
  const entry = { id: newKeyId(), key: randomBytes(KEY_BYTES).toString("base64") };
  await createPrivateFile(path, `${JSON.stringify({ keys: [entry] }, null, 2)}\n`);
}

/**
 * The keyring, first key active. From `envValue` (ASCRIBE_SECRET_KEYS) when set; otherwise from
 * `DATA_DIR/secret.key`, created with one random key on first start. An env keyring ignores the file:
 * to move from the file to the env, put the file's key into the env value.
 */
export async function loadOrCreateKeyring(options: {
  envValue: string | null;
  dataDir: string;
  /** Told about a key file others can read; never given key material. */
  warn?: (message: string) => void;
}): Promise<SecretKey[]> {
  if (options.envValue !== null) return parseKeyringValue(options.envValue);
  const warn = options.warn ?? (() => {});
  const path = join(options.dataDir, KEY_FILE_NAME);
  const existing = await readKeyFile(path, warn);
  if (existing) return existing;
  await mkdir(options.dataDir, { recursive: true });
  await createKeyFile(path);
  const created = await readKeyFile(path, warn);
  if (!created) throw new Error(`${path} vanished right after it was created`);
  return created;
}
