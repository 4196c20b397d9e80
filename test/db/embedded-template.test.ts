import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { buildState } from "../../bin/build-state.js";
import { openEmbedded, rows } from "../../src/db/client.ts";
import {
  embeddedTemplateDigest,
  MIGRATIONS_DIR,
  shippedTemplate,
  writeShippedTemplate,
} from "../../src/db/embedded-template.ts";
import { backend } from "../helpers/harness.ts";

/*
 * A fresh DATA_DIR starts from the migrated database the build wrote into dist/ instead of PGlite's
 * initdb and every migration (src/db/embedded-template.ts). An embedded-database feature: the
 * PostgreSQL leg skips it.
 */

const made: string[] = [];
const scratch = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A database holding one table of its own, as an archive: which start it came from shows. */
async function markedArchive(): Promise<Blob> {
  const client = await PGlite.create("memory://");
  await client.exec("create table template_marker (id int)");
  const archive = await client.dumpDataDir("gzip");
  await client.close();
  return archive;
}

async function tables(dataDir: string, template: () => Blob | undefined): Promise<string[]> {
  const db = await openEmbedded(dataDir, { template });
  try {
    const found = await db.admin(null, (tx) =>
      rows<{ name: string }>(
        tx,
        sql`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where c.relkind = 'r' and n.nspname in ('public', 'drizzle') order by 1`,
      ),
    );
    return found.map((row) => row.name);
  } finally {
    await db.close();
  }
}

describe("a fresh data directory starts from the build's migrated database", {
  skip: backend === "postgres" && "the embedded database's start",
}, () => {
  test("a directory without a database loads the template; one with a database never asks for it", async () => {
    const marked = await markedArchive();
    const dataDir = scratch("ascribe-template-");
    assert.deepEqual(await tables(dataDir, () => marked), ["template_marker"]);
    assert.deepEqual(
      await tables(dataDir, () => {
        throw new Error("asked for a template over an existing database");
      }),
      ["template_marker"],
    );
  });

  test("without a template, initdb as before: an empty database", async () => {
    assert.deepEqual(await tables(scratch("ascribe-template-"), () => undefined), []);
  });

  test("the build's archive is every migration applied, named by their digest; earlier ones go", async () => {
    const dist = scratch("ascribe-dist-");
    const stale = join(dist, "embedded-template-0123456789abcdef.tar.gz");
    writeFileSync(stale, "an earlier build's");
    assert.equal(shippedTemplate(dist), undefined);
    const written = await writeShippedTemplate(dist);
    assert.equal(written, join(dist, `embedded-template-${embeddedTemplateDigest()}.tar.gz`));
    assert.deepEqual(readdirSync(dist), [`embedded-template-${embeddedTemplateDigest()}.tar.gz`]);
    assert.equal(existsSync(stale), false);

    const dataDir = scratch("ascribe-template-");
    const db = await openEmbedded(dataDir, { template: () => shippedTemplate(dist) });
    try {
      // Before any migrate call: the database came migrated, every shipped migration recorded.
      const [applied] = await db.admin(null, (tx) =>
        rows<{ n: number }>(tx, sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
      );
      assert.equal(applied?.n, readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR }).length);
      await db.migrate();
    } finally {
      await db.close();
    }
  });

  test("npm install's build ships the archive of the current migrations", {
    skip: buildState() !== "current" && "dist/ is not a build of the current sources (npm run build)",
  }, () => {
    assert.ok(shippedTemplate());
  });
});
