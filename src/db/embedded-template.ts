import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";

/*
 * A new embedded database runs PGlite's initdb and then every migration: 4–7 s of CPU measured here
 * (each start of a fresh DATA_DIR: a first `npm start`, every fresh test service). Loading the
 * archive of one made that way takes about 1 s. The build writes that archive into dist/ (a file of
 * the install, never of a shared folder another user could write), named by a digest of what made
 * it; a fresh data directory starts from it when the digest is the current one, and from initdb
 * otherwise. `migrate` then runs as on any start, and finds nothing to do.
 */

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

/** dist/ of this install, from src/db or dist/db alike. */
const DIST_DIR = fileURLToPath(new URL("../../dist", import.meta.url));

const PREFIX = "embedded-template-";

/** PGlite's own version: another PGlite may not read an archive of this one. */
function pgliteVersion(): string {
  // The package's exports hide its package.json: found above its entry point.
  let dir = dirname(fileURLToPath(import.meta.resolve("@electric-sql/pglite")));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "@electric-sql/pglite" && parsed.version) return parsed.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("@electric-sql/pglite's package.json not found");
    dir = parent;
  }
}

/** A digest of every migration file (names and contents) and of `extra`: a migrated database's identity. */
export function migrationsDigest(extra = ""): string {
  const digest = createHash("sha256").update(extra);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else digest.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_DIR);
  return digest.digest("hex").slice(0, 16);
}

/** The digest an archive of this PGlite and these migrations is named by. */
export function embeddedTemplateDigest(): string {
  return migrationsDigest(`pglite ${pgliteVersion()}`);
}

/** A new, migrated, empty embedded database as a `dumpDataDir` archive. */
export async function migratedArchive(): Promise<Blob> {
  const client = await PGlite.create("memory://");
  try {
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
    return await client.dumpDataDir("gzip");
  } finally {
    await client.close();
  }
}

/** The build's archive for the current migrations and PGlite; undefined when there is none. */
export function shippedTemplate(distDir = DIST_DIR): Blob | undefined {
  const path = join(distDir, `${PREFIX}${embeddedTemplateDigest()}.tar.gz`);
  return existsSync(path) ? new Blob([readFileSync(path)]) : undefined;
}

/** Writes the archive into `distDir` (scripts/build.js) and removes those of earlier builds; its path. */
export async function writeShippedTemplate(distDir = DIST_DIR): Promise<string> {
  const name = `${PREFIX}${embeddedTemplateDigest()}.tar.gz`;
  const archive = Buffer.from(await (await migratedArchive()).arrayBuffer());
  // Written aside and renamed: a service starting meanwhile reads the whole file or none.
  const partial = join(distDir, `${name}.partial`);
  writeFileSync(partial, archive);
  renameSync(partial, join(distDir, name));
  for (const stale of readdirSync(distDir)) {
    if (stale.startsWith(PREFIX) && stale !== name) rmSync(join(distDir, stale), { force: true });
  }
  return join(distDir, name);
}

/** Whether `pgdataDir` holds no database yet: PGlite tells one by its PG_VERSION file too. */
export function isNewDataDir(pgdataDir: string): boolean {
  return !existsSync(join(pgdataDir, "PG_VERSION"));
}
