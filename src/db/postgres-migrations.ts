import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { migrationLag } from "./migration-lag.ts";

/** Several processes migrating at once take turns on this advisory lock. */
const MIGRATION_LOCK = 727274;

/**
 * Brings a PostgreSQL database up to `migrationsFolder`. A login that may not create in the
 * database (the app's non-owner login, docs/operations.md) cannot migrate it: it only checks that
 * the owner already did, and refuses to start on an older schema.
 */
export async function migratePostgres(
  url: string,
  migrationsFolder: string,
  connectTimeoutMs: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  await client.connect();
  try {
    const { rows } = await client.query<{ owner: boolean }>(
      "select has_database_privilege(current_database(), 'CREATE') as owner",
    );
    if (!rows[0]?.owner) {
      await assertCurrent(client, migrationsFolder);
      return;
    }
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}

async function assertCurrent(client: pg.Client, migrationsFolder: string): Promise<void> {
  let applied = 0;
  try {
    const { rows } = await client.query<{ latest: string | null }>(
      "select max(created_at) as latest from drizzle.__drizzle_migrations",
    );
    applied = Number(rows[0]?.latest ?? 0);
  } catch (err) {
    // No migration table (never migrated) or no right to read it (grants not given): both say the
    // owner has to run the migrations first.
    throw new Error(
      `cannot read the migrations applied to this database as ${client.user ?? "this login"} (${(err as Error).message}): run \`ascribe migrate\` with the owner's DATABASE_URL`,
    );
  }
  const { behind } = migrationLag(migrationsFolder, applied);
  if (behind > 0) {
    throw new Error(
      `the database is ${behind} migration(s) behind and ${client.user ?? "this login"} does not own it: run \`ascribe migrate\` with the owner's DATABASE_URL`,
    );
  }
}
