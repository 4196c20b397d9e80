/**
 * The pipeline suite's bare targets (bench/pipeline-targets.ts): a `node:http` server answering
 * prepared bytes, and the /icp/criteria query run with nothing around it. See bench/README.md.
 */
import { createServer } from "node:http";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { type Database, MIGRATIONS_DIR, rows } from "../src/db/client.ts";
import { listenAddress } from "./load.ts";

/** The query of src/queries/icp-criteria.ts, as text; the identical answers are checked before measuring. */
const ICP_SQL = "select account_id, criteria from icp_criteria where account_id = $1";

/** A `node:http` server answering `bytes` as JSON to every request, on 127.0.0.1. */
export async function serveBareHttp(bytes: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: listenAddress(server),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export async function listen(
  app: FastifyInstance,
  routes: (app: FastifyInstance) => unknown,
): Promise<FastifyInstance> {
  routes(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  return app;
}

/**
 * The /icp/criteria query with nothing around it. PostgreSQL: a pool like the app's (10 connections,
 * JIT off) and `pool.query` with the account id bound: one round trip. The bench connects as the
 * server's superuser, which row-level security does not apply to; the account is also set for the
 * connection's session, so that a non-superuser owner reads the same row. PGlite: the embedded
 * database gives no access outside its transactions, so the query runs on a PGlite of its own on the
 * same thread, migrated alike, holding the same account and criteria rows.
 */
export async function bareQuery(bench: {
  db: Database;
  accountId: string;
  /** PostgreSQL: the database's URL; absent: PGlite. */
  url?: URL;
}): Promise<{ criteria(): Promise<unknown>; close(): Promise<void> }> {
  const { accountId } = bench;
  const pick = (found: { criteria: unknown }[]) => found[0]?.criteria ?? {};
  if (bench.url) {
    const pool = new pg.Pool({
      connectionString: bench.url.toString(),
      max: 10,
      options: `-c jit=off -c app.account_id=${accountId}`,
    });
    // As the app's pool: an idle connection the server cuts (the database dropped at the end, with
    // force) must not end the suite with an unhandled 'error' event.
    pool.on("error", () => {});
    return {
      criteria: async () => pick((await pool.query<{ criteria: unknown }>(ICP_SQL, [accountId])).rows),
      close: () => pool.end(),
    };
  }
  const copied = await bench.db.admin(accountId, (tx) =>
    rows<{ account: unknown; criteria: unknown }>(
      tx,
      sql`select (select row_to_json(a) from accounts a where a.id = ${accountId}) as account,
                 (select row_to_json(c) from icp_criteria c where c.account_id = ${accountId}) as criteria`,
    ),
  );
  const client = await PGlite.create("memory://");
  try {
    await migratePglite(drizzlePglite(client), { migrationsFolder: MIGRATIONS_DIR });
    await client.query("insert into accounts select * from json_populate_record(null::accounts, $1)", [
      JSON.stringify(copied[0]?.account),
    ]);
    await client.query(
      "insert into icp_criteria select * from json_populate_record(null::icp_criteria, $1)",
      [JSON.stringify(copied[0]?.criteria)],
    );
  } catch (err) {
    await client.close();
    throw err;
  }
  return {
    criteria: async () => pick((await client.query<{ criteria: unknown }>(ICP_SQL, [accountId])).rows),
    close: () => client.close(),
  };
}
