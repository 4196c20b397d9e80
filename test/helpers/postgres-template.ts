import pg from "pg";
import { openPostgres } from "../../src/db/client.ts";
import { migrationsDigest } from "../../src/db/embedded-template.ts";

/*
 * Every test file on PostgreSQL opens at least one fresh database. Migrating an empty one took about
 * 2 s on the CI machine; copying a migrated template (CREATE DATABASE … TEMPLATE) takes about 0.3 s.
 * The template is made once per set of migrations (its name carries their digest), by whichever test
 * process needs it first, under an advisory lock the others wait on; it is migrated under a
 * temporary name and renamed when complete, so a template that exists is whole. Nothing connects to
 * it afterwards (PostgreSQL copies a template only while no session is connected to it).
 */

const LOCK = 727_301;

let template: Promise<string> | undefined;

/** The name of a migrated, empty database on the server of `serverUrl`, to copy. */
export function postgresTemplate(serverUrl: string): Promise<string> {
  template ??= (async () => {
    const name = `ascribe_template_${migrationsDigest()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query("select pg_advisory_lock($1)", [LOCK]);
      const { rowCount } = await admin.query("select 1 from pg_database where datname = $1", [name]);
      if (rowCount === 0) {
        const partial = `${name}_partial`;
        await admin.query(`drop database if exists "${partial}" with (force)`);
        await admin.query(`create database "${partial}"`);
        const url = new URL(serverUrl);
        url.pathname = `/${partial}`;
        const db = await openPostgres(url.toString(), 60_000);
        try {
          await db.migrate();
        } finally {
          await db.close();
        }
        await admin.query(`alter database "${partial}" rename to "${name}"`);
      }
      return name;
    } finally {
      await admin.query("select pg_advisory_unlock($1)", [LOCK]).catch(() => {});
      await admin.end();
    }
  })();
  return template;
}
