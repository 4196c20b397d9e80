import { lstat, readdir } from "node:fs/promises";
import { join, relative } from "node:path";

export interface ModeEntry {
  /** Relative to the walked folder ("." for the folder itself). */
  path: string;
  kind: "dir" | "file" | "socket" | "symlink" | "other";
  /** Permission bits, e.g. 0o600. */
  mode: number;
}

/** Every entry under `root` (itself included), symbolic links listed but not followed. */
export async function walkModes(root: string): Promise<ModeEntry[]> {
  const found: ModeEntry[] = [];
  const visit = async (path: string) => {
    const stat = await lstat(path);
    const kind = stat.isSymbolicLink()
      ? "symlink"
      : stat.isDirectory()
        ? "dir"
        : stat.isFile()
          ? "file"
          : stat.isSocket()
            ? "socket"
            : "other";
    found.push({ path: relative(root, path) || ".", kind, mode: stat.mode & 0o7777 });
    if (kind === "dir") for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return found;
}

/** The entries whose mode is not the private one (dirs 0700, files and sockets 0600), as `0644 path`. */
export function notPrivate(entries: readonly ModeEntry[]): string[] {
  return entries
    .filter((e) => e.kind !== "symlink" && e.mode !== (e.kind === "dir" ? 0o700 : 0o600))
    .map((e) => `${e.mode.toString(8).padStart(4, "0")} ${e.kind} ${e.path}`);
}

/** Runs `fn` with the process umask set to `mask` (children spawned inside inherit it). */
export function withUmask<T>(mask: number, fn: () => T): T {
  const previous = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}
