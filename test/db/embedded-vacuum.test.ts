import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "drizzle-orm";
import { openEmbedded, rows } from "../../src/db/client.ts";
import { foldReportRollup } from "../../src/queries/fold-report-rollup.ts";
import { seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

// PGlite has no autovacuum: without the embedded database's own VACUUM of the delta logs, the rows
// each fold deletes stay dead in the table and every later fold walks them.
test("the embedded database vacuums the rollups' delta logs between transactions", async () => {
  const db = await openEmbedded(null, { deltaVacuumIntervalMs: 200 });
  try {
    await db.migrate();
    const account = await seedAccount(db);
    const a = account.accountId;
    await loadFixture(db, a, {
      events: Array.from({ length: 50 }, (_, i) => ({
        id: `l${i}`,
        event_type: "lead",
        event_datetime: "2026-03-02T10:00:00Z",
        contact_email: `c${i}@x.test`,
      })),
    });
    await db.tenant(a, (tx) => foldReportRollup(tx, a));
    // Every delta is folded, so every row of the log is dead: VACUUM removes them and truncates the
    // emptied pages, which only it does.
    const pages = () =>
      db.admin(null, async (tx) => {
        const [row] = await rows<{ bytes: number }>(
          tx,
          sql`select pg_relation_size('report_rollup_delta')::int as bytes`,
        );
        return row?.bytes ?? -1;
      });
    assert.ok((await pages()) > 0, "the folded deltas are still on disk");
    const deadline = Date.now() + 10_000;
    let bytes = await pages();
    while (bytes > 0 && Date.now() < deadline) {
      await sleep(100);
      bytes = await pages();
    }
    assert.equal(bytes, 0);
  } finally {
    await db.close();
  }
});
