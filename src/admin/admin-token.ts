import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createPrivateFile } from "../storage/private-file.ts";

/*
 * Who may send admin commands: the user running the server, or root. Node cannot ask the kernel
 * for a Unix socket peer's uid (no SO_PEERCRED), so the peer proves it instead: it sends the token
 * held in DATA_DIR/admin.token, a regular file of the server's user with mode 0600 in a 0700
 * DATA_DIR. Reading it takes that uid or root's override (CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH):
 * exactly the peers allowed. The proof holds only while the file is private, so the server checks
 * the file (type, owner, mode) each time it reads it and refuses everything when it is not, and a
 * token found readable by others is replaced, never narrowed, since it may have been copied.
 * The socket's own mode (0600) stays the first barrier; this one holds when that one was loosened.
 */

export const ADMIN_TOKEN_FILE = "admin.token";
const TOKEN_BYTES = 32;

export function adminTokenPath(dataDir: string): string {
  return join(dataDir, ADMIN_TOKEN_FILE);
}

/** The token, or null when the file is missing or no longer private (then nobody is let in). */
export async function readOwnAdminToken(dataDir: string): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(adminTokenPath(dataDir), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    const owner = process.getuid?.() ?? stat.uid;
    if (!stat.isFile() || stat.uid !== owner || (stat.mode & 0o077) !== 0) return null;
    const token = (await handle.readFile("utf8")).trim();
    return token.length > 0 ? token : null;
  } finally {
    await handle.close();
  }
}

/** What a client sends: the token when this process can read it, else nothing (and is refused). */
export async function readAdminTokenAsPeer(dataDir: string): Promise<string> {
  try {
    const handle = await open(adminTokenPath(dataDir), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return (await handle.readFile("utf8")).trim();
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
}

/** Compares in constant time; an empty or non-string offer never matches. */
export function tokenMatches(expected: string, offered: unknown): boolean {
  if (typeof offered !== "string" || offered.length === 0) return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(expected), digest(offered));
}

/**
 * Makes sure DATA_DIR holds a private token: creates one when there is none, and replaces one that
 * is not private any more. The new file is complete and 0600 before it takes the name.
 */
export async function ensureAdminToken(dataDir: string): Promise<void> {
  if ((await readOwnAdminToken(dataDir)) !== null) return;
  // An existing file that is not private (or not ours) is replaced; a private one is kept.
  await createPrivateFile(adminTokenPath(dataDir), `${randomBytes(TOKEN_BYTES).toString("base64url")}\n`, {
    replaceExisting: async () => (await readOwnAdminToken(dataDir)) === null,
  });
}
