import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { MIGRATIONS_DIR } from "../../src/db/client.ts";
import { migrationsDigest } from "./migrations-digest.ts";

/*
 * Every test file opens at least one in-memory PGlite. Created empty, each runs initdb and then every
 * migration: about 7 s of CPU per open on the CI machine, where loading a migrated database's archive
 * takes about 1 s. The archive is built once per set of migrations (its name carries their digest and
 * PGlite's version), by whichever test process needs it first, and shared through the temporary folder.
 */

function templatePath(): string {
  const pglite = JSON.parse(
    readFileSync(new URL("../../node_modules/@electric-sql/pglite/package.json", import.meta.url), "utf8"),
  ).version;
  return join(tmpdir(), `ascribe-pglite-migrated-${migrationsDigest(pglite)}.tar.gz`);
}

let template: Promise<Blob> | undefined;

/** A migrated, empty embedded database as a `dumpDataDir` archive. */
export function migratedTemplate(): Promise<Blob> {
  template ??= (async () => {
    const path = templatePath();
    if (!existsSync(path)) {
      const client = await PGlite.create("memory://");
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
      const archive = Buffer.from(await (await client.dumpDataDir("gzip")).arrayBuffer());
      await client.close();
      // Written aside and renamed: a process reading at the same moment sees the whole file or none.
      const partial = `${path}.${process.pid}.partial`;
      writeFileSync(partial, archive);
      renameSync(partial, path);
    }
    return new Blob([readFileSync(path)]);
  })();
  return template;
}
