import type { Dirent } from "node:fs";
import { chmod, lstat, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { ADMIN_TOKEN_FILE } from "../admin/admin-token.ts";
import { KEY_FILE_NAME } from "../crypto/secret-box.ts";

/** What DATA_DIR's directories and files are made: the service's user alone reads or enters them. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * The umask of every process that writes into DATA_DIR. PGlite creates folders and files through
 * Node's fs while it runs (new relations, WAL segments), so the umask is what bounds them; the few
 * it chmods itself (a new database's files 0666, the relation cache 0644) are narrowed once it is
 * open (main.ts, openDatabase), inside folders the umask already made 0700. The object store and
 * the key files pass explicit modes as well, so they hold even without the umask.
 */
const PRIVATE_UMASK = 0o077;

export interface SecureReport {
  /** Entries whose mode was narrowed (a DATA_DIR from an earlier version, or a careless copy). */
  tightened: number;
  /** Entries left as they were, with why (not ours to chmod, or left for a check that refuses them). */
  skipped: string[];
}

/**
 * Makes DATA_DIR private before this process opens what it holds: sets the process umask once, so
 * everything created from now on is 0700 / 0600, and narrows what an earlier start left wider.
 * Called where a process starts using DATA_DIR's contents (`ascribe serve`, a CLI command that
 * opens the database itself), after it holds the lock.
 */
export async function secureDataDir(
  dataDir: string,
  warn: (message: string) => void = () => {},
): Promise<SecureReport> {
  process.umask(PRIVATE_UMASK);
  await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const report: SecureReport = { tightened: 0, skipped: [] };
  await tighten(dataDir, true, report);
  if (report.skipped.length > 0) {
    const shown = report.skipped.slice(0, 5).join("; ");
    const more = report.skipped.length > 5 ? ` (and ${report.skipped.length - 5} more)` : "";
    warn(`DATA_DIR: ${report.skipped.length} entries could not be made private: ${shown}${more}`);
  }
  return report;
}

/** Narrows one folder of DATA_DIR and all it holds (0700 / 0600, bits only removed). */
export async function narrowToPrivate(dir: string): Promise<SecureReport> {
  const report: SecureReport = { tightened: 0, skipped: [] };
  await tighten(dir, false, report);
  return report;
}

/**
 * Two files at DATA_DIR's top are not narrowed when group or others could write them: such a
 * `secret.key` may hold a key someone else chose, and the keyring refuses it with its own message;
 * such an `admin.token` is a proof others may hold, and the admin socket replaces it.
 */
function leftForItsCheck(name: string, mode: number, top: boolean): boolean {
  if (!top) return false;
  if (name === KEY_FILE_NAME) return (mode & 0o022) !== 0;
  if (name === ADMIN_TOKEN_FILE) return (mode & 0o077) !== 0;
  return false;
}

async function tighten(dir: string, top: boolean, report: SecureReport): Promise<void> {
  const own = await lstat(dir).catch(() => null);
  if (!own) return;
  await narrow(dir, own.mode, PRIVATE_DIR_MODE, report);
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") report.skipped.push(`${dir}: ${code ?? String(err)}`);
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    // A symbolic link is not followed: chmod would narrow whatever it points at, maybe outside DATA_DIR.
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      await tighten(path, false, report);
      continue;
    }
    // Gone since it was listed (a temporary file of the database): nothing to narrow.
    const found = await lstat(path).catch(() => null);
    if (!found) continue;
    const { mode } = found;
    if (leftForItsCheck(entry.name, mode, top)) {
      report.skipped.push(`${path}: writable or readable by others, left for its own check`);
      continue;
    }
    await narrow(path, mode, PRIVATE_FILE_MODE, report);
  }
}

/** Removes bits only: a file made 0400 on purpose stays 0400. */
async function narrow(path: string, mode: number, allowed: number, report: SecureReport): Promise<void> {
  const current = mode & 0o7777;
  const wanted = current & allowed;
  if (current === wanted) return;
  try {
    await chmod(path, wanted);
    report.tightened += 1;
  } catch (err) {
    report.skipped.push(`${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}
