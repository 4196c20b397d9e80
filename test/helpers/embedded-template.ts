import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedTemplateDigest, migratedArchive } from "../../src/db/embedded-template.ts";

/*
 * Every test file opens at least one in-memory PGlite. Created empty, each runs initdb and then every
 * migration: about 7 s of CPU per open on the CI machine, where loading a migrated database's archive
 * takes about 1 s. The archive is built once per set of migrations (its name carries their digest and
 * PGlite's version), by whichever test process needs it first, and shared through the temporary folder.
 * (A service's fresh DATA_DIR starts from the build's own copy in dist/: src/db/embedded-template.ts.)
 */

let template: Promise<Blob> | undefined;

/** A migrated, empty embedded database as a `dumpDataDir` archive. */
export function migratedTemplate(): Promise<Blob> {
  template ??= (async () => {
    const path = join(tmpdir(), `ascribe-pglite-migrated-${embeddedTemplateDigest()}.tar.gz`);
    if (!existsSync(path)) {
      const archive = Buffer.from(await (await migratedArchive()).arrayBuffer());
      // Written aside and renamed: a process reading at the same moment sees the whole file or none.
      const partial = `${path}.${process.pid}.partial`;
      writeFileSync(partial, archive);
      renameSync(partial, path);
    }
    return new Blob([readFileSync(path)]);
  })();
  return template;
}
