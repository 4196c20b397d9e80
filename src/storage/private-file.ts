import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes `contents` as a new file at `path`, mode 0600 whatever the umask, complete and synced before
 * it appears under its name. link() never replaces: when two processes create the file at once, the
 * first wins. A file already there is kept, unless `replaceExisting` says it must go (it is then
 * replaced in one rename). Returns whether this call's file took the name.
 */
export async function createPrivateFile(
  path: string,
  contents: string,
  options: { replaceExisting?: () => Promise<boolean> } = {},
): Promise<boolean> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", 0o600);
  try {
    try {
      // The umask only removes bits; chmod makes the mode exactly 0600 whatever it is.
      await handle.chmod(0o600);
      await handle.writeFile(contents, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (!(await options.replaceExisting?.())) return false;
      await rename(temp, path);
    }
    await syncDirectory(dir);
    return true;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** The new name must survive a crash: what the file holds may be relied on right after. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every platform can sync a directory (Windows); the file itself is synced already.
  }
}
