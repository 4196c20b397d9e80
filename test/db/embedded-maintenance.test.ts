import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { openEmbedded, rows } from "../../src/db/client.ts";
import { dueMaintenance, maintainEmbedded } from "../../src/db/embedded-maintenance.ts";
import { foldReportRollup } from "../../src/queries/fold-report-rollup.ts";
import { seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

// PGlite has no autovacuum: the process applies PostgreSQL's rule (threshold + scale factor × rows,
// per table settings honoured) to its embedded database. The thresholds below are worked out by
// hand from PostgreSQL's defaults: vacuum 50 + 0.2 × rows, insert 1000 + 0.2 × rows, analyze
// 50 + 0.1 × rows.
describe("the embedded autovacuum rule", () => {
  let pg: PGlite;
  before(async () => {
    pg = await PGlite.create("memory://");
  });
  after(() => pg.close());
  /** Rows written, then a VACUUM ANALYZE that sees them all (counts reach the statistics when flushed). */
  const settled = async (statements: string, table: string) => {
    await pg.exec(statements);
    await pg.exec("select pg_stat_force_next_flush()");
    await pg.exec(`vacuum analyze ${table}`);
  };

  test("dead rows: analyze past 50 + 10 %, vacuum past 50 + 20 %", async () => {
    await settled(
      "create table dead_rows (id int primary key); insert into dead_rows select generate_series(1, 1000)",
      "dead_rows",
    );
    assert.deepEqual(await dueMaintenance(pg), []);
    await pg.exec("delete from dead_rows where id <= 150"); // 150 changed: not past 150
    assert.deepEqual(await dueMaintenance(pg), []);
    await pg.exec("delete from dead_rows where id = 151"); // 151 changed, 151 dead: analyze only
    assert.deepEqual(await dueMaintenance(pg), ["ANALYZE public.dead_rows"]);
    await pg.exec("delete from dead_rows where id <= 251"); // 251 dead: past 250
    assert.deepEqual(await maintainEmbedded(pg), ["VACUUM public.dead_rows", "ANALYZE public.dead_rows"]);
    assert.deepEqual(await dueMaintenance(pg), [], "a pass clears what it was due");
    const [size] = (
      await pg.query<{ n: number }>("select reltuples::int as n from pg_class where relname = 'dead_rows'")
    ).rows;
    assert.equal(size?.n, 749);
    await pg.exec("drop table dead_rows");
  });

  test("a table's own autovacuum settings replace the defaults", async () => {
    await settled(
      `create table logged (id int primary key)
         with (autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_scale_factor = 0);
       insert into logged select generate_series(1, 6000)`,
      "logged",
    );
    await pg.exec("delete from logged where id <= 5000"); // 5000 dead: not past 5000
    assert.deepEqual(await dueMaintenance(pg), ["ANALYZE public.logged"]);
    await pg.exec("delete from logged where id = 5001");
    assert.deepEqual(await dueMaintenance(pg), ["VACUUM public.logged", "ANALYZE public.logged"]);
    await pg.exec("drop table logged");
  });

  test("inserts alone: vacuumed past 1000 + 20 % (the visibility map for index-only scans)", async () => {
    await settled(
      "create table appended (id int); insert into appended select generate_series(1, 1000)",
      "appended",
    );
    await pg.exec("insert into appended select generate_series(1, 1200)"); // 1200: not past 1200
    assert.deepEqual(await dueMaintenance(pg), ["ANALYZE public.appended"]);
    await pg.exec("insert into appended values (0)");
    assert.deepEqual(await dueMaintenance(pg), ["VACUUM public.appended", "ANALYZE public.appended"]);
    await pg.exec("drop table appended");
  });

  // What another process wrote (PGlite keeps no counts across restarts) looks like this: rows the
  // statistics never saw, on pages no vacuum marked all-visible.
  test("a table holding rows but never vacuumed nor analyzed is both, however few its rows", async () => {
    await pg.exec(
      "create table fresh (id int); insert into fresh values (1), (2); create table empty (id int)",
    );
    assert.deepEqual(await dueMaintenance(pg), ["VACUUM public.fresh", "ANALYZE public.fresh"]);
    await pg.exec("drop table fresh; drop table empty");
  });

  test("after a bulk write, a pass takes every change, however few", async () => {
    await settled(
      "create table loaded (id int primary key, n int); insert into loaded select generate_series(1, 1000), 0",
      "loaded",
    );
    await pg.exec("update loaded set n = 1 where id <= 10"); // 10 dead, 10 changed: far below
    assert.deepEqual(await dueMaintenance(pg), []);
    assert.deepEqual(await maintainEmbedded(pg, { afterBulkWrite: true }), [
      "VACUUM public.loaded",
      "ANALYZE public.loaded",
    ]);
    assert.deepEqual(await dueMaintenance(pg, { afterBulkWrite: true }), [], "nothing left to take");
    await pg.exec("drop table loaded");
  });

  // Written by one process below its thresholds, read by the next: the newest rows were never
  // marked all-visible, and the reader's first pass sees no count of them.
  test("after a restart, the first pass vacuums the pages the last process left unvisited", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ascribe-maintenance-"));
    try {
      const writer = await PGlite.create(dir);
      await writer.exec("create table appended (id int primary key)");
      await writer.exec("insert into appended select generate_series(1, 5000)");
      await writer.exec("select pg_stat_force_next_flush()");
      await writer.exec("vacuum analyze appended");
      await writer.exec("insert into appended select generate_series(5001, 5200)"); // below 1000 + 20 %
      await writer.exec("select pg_stat_force_next_flush()");
      assert.deepEqual(await dueMaintenance(writer), [], "the writer is not due");
      await writer.close();

      const reader = await PGlite.create(dir);
      const heapFetches = async () => {
        const plan = await reader.query<{ "QUERY PLAN": [{ Plan: { "Heap Fetches": number } }] }>(
          "explain (analyze, format json) select id from appended where id > 5100",
        );
        return plan.rows[0]?.["QUERY PLAN"][0].Plan["Heap Fetches"];
      };
      await reader.exec("set enable_seqscan = off; set enable_bitmapscan = off");
      assert.equal(await heapFetches(), 100);
      assert.deepEqual(await maintainEmbedded(reader), ["VACUUM public.appended"]);
      assert.equal(await heapFetches(), 0);
      assert.deepEqual(await dueMaintenance(reader), [], "once visited, not again");
      await reader.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Statistics taken after one account's load would say another account has no rows: its own
  // load, planned as one row against one row, ran nested loops over all its rows for each row.
  test("account_id is left out of the statistics: an account they never saw is not taken for one row", async () => {
    await pg.exec(`
      create table tenanted (account_id int, id int);
      insert into tenanted select 1, generate_series(1, 10000)`);
    assert.deepEqual(await maintainEmbedded(pg), [
      "VACUUM public.tenanted",
      "ANALYZE public.tenanted; DELETE FROM pg_statistic WHERE starelid = 'public.tenanted'::regclass AND staattnum = 1",
    ]);
    const analyzed = await pg.query<{ attname: string }>(
      "select attname from pg_stats where tablename = 'tenanted' order by attname",
    );
    assert.deepEqual(analyzed.rows, [{ attname: "id" }]);
    const plan = await pg.query<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
      "explain (format json) select * from tenanted where account_id = 2",
    );
    // No statistics: PostgreSQL's default equality selectivity, 1 / 200 of the table's 10,000 rows.
    assert.equal(plan.rows[0]?.["QUERY PLAN"][0].Plan["Plan Rows"], 50);
    await pg.exec("drop table tenanted");
  });
});

describe("the embedded database's maintenance", () => {
  // The counts reach the statistics when flushed, as the first transaction ends; the second reads them.
  const deadRollupRows = async (db: Awaited<ReturnType<typeof openEmbedded>>) => {
    await db.admin(null, (tx) => tx.execute(sql`select pg_stat_force_next_flush()`));
    return db.admin(null, async (tx) => {
      const [row] = await rows<{ dead: number }>(
        tx,
        sql`select n_dead_tup::int as dead from pg_stat_user_tables where relname = 'report_rollup_daily'`,
      );
      return row?.dead ?? -1;
    });
  };

  // The fold rewrites the rollup rows it adds to; without a vacuum the old versions stay, and every
  // report reads through them (420 ms instead of 20 at scale 100).
  test("maintain() vacuums the rollup rows a fold rewrote", async () => {
    const db = await openEmbedded(null, { maintenanceIntervalMs: 3_600_000 });
    try {
      await db.migrate();
      const { accountId: a } = await seedAccount(db);
      const leads = (prefix: string) =>
        Array.from({ length: 60 }, (_, i) => ({
          id: `${prefix}${i}`,
          event_type: "lead",
          event_datetime: `2026-03-${String((i % 28) + 1).padStart(2, "0")}T10:00:00Z`,
          contact_email: `${prefix}${i}@x.test`,
          utm_source: `source${i % 3}`,
        }));
      await loadFixture(db, a, { events: leads("a") });
      await db.tenant(a, (tx) => foldReportRollup(tx, a));
      await loadFixture(db, a, { events: leads("b") });
      await db.tenant(a, (tx) => foldReportRollup(tx, a));
      assert.ok((await deadRollupRows(db)) > 50, "the second fold left old versions behind");
      await db.maintain();
      assert.equal(await deadRollupRows(db), 0);
    } finally {
      await db.close();
    }
  });

  // The reports read their newest rows index-only: those tables are vacuumed after 5,000 new rows
  // whatever their size (migration 0015), not after 20 % of it, by PostgreSQL and by the passes alike.
  test("the tables read index-only are vacuumed after 5,000 inserted rows", async () => {
    const db = await openEmbedded(null, { maintenanceIntervalMs: 3_600_000 });
    try {
      await db.migrate();
      const settings = await db.admin(null, (tx) =>
        rows<{ relname: string; reloptions: string[] }>(
          tx,
          sql`select relname, reloptions from pg_class
              where relname in ('events', 'contact_milestones', 'touchpoints', 'contacts', 'contact_activity')
              order by relname`,
        ),
      );
      const insertRule = [
        "autovacuum_vacuum_insert_scale_factor=0",
        "autovacuum_vacuum_insert_threshold=5000",
      ];
      assert.deepEqual(settings, [
        { relname: "contact_activity", reloptions: insertRule },
        { relname: "contact_milestones", reloptions: insertRule },
        { relname: "contacts", reloptions: insertRule },
        { relname: "events", reloptions: insertRule },
        { relname: "touchpoints", reloptions: insertRule },
      ]);
    } finally {
      await db.close();
    }
  });

  test("passes run on their own, every maintenanceIntervalMs", async () => {
    const db = await openEmbedded(null, { maintenanceIntervalMs: 50 });
    try {
      await db.migrate();
      await seedAccount(db);
      const analyzed = () =>
        db.admin(null, async (tx) => {
          const [row] = await rows<{ n: number }>(
            tx,
            sql`select reltuples::int as n from pg_class where relname = 'accounts'`,
          );
          return row?.n ?? -1;
        });
      const deadline = Date.now() + 10_000;
      let n = await analyzed();
      while (n < 0 && Date.now() < deadline) {
        await sleep(50);
        n = await analyzed();
      }
      assert.equal(n, 1, "the accounts table, never analyzed, was analyzed by a pass: one row");
    } finally {
      await db.close();
    }
  });
});
