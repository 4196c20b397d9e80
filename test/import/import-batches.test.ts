import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { callAdminSocket, lockDataDir, releaseDataDir } from "../../src/admin/admin-socket.ts";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { BatchSizer, isRetryable, writeWithRetry } from "../../src/import/batch-runner.ts";
import { type ImportProgress, runImport } from "../../src/import/run-import.ts";
import { backend, openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

let db: Database;
let dir: string;
before(async () => {
  db = await openTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "ascribe-import-batches-"));
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `n` lead events e1…en of one contact each, one per line, optionally with some lines replaced. */
function eventsFile(name: string, n: number, replace: Record<number, string> = {}): string {
  const lines = Array.from(
    { length: n },
    (_, i) =>
      replace[i + 1] ??
      JSON.stringify({
        id: `e${i + 1}`,
        event_type: "lead",
        event_datetime: `2026-02-01T09:${String(i % 60).padStart(2, "0")}:00Z`,
        contact_email: `c${i + 1}@example.com`,
      }),
  );
  const path = join(dir, name);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const stored = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ events: number; distinct_ids: number; touchpoints: number; contacts: number }>(
      tx,
      sql`select (select count(*)::int from events where account_id = ${accountId}) as events,
                 (select count(distinct id)::int from events where account_id = ${accountId}) as distinct_ids,
                 (select count(*)::int from touchpoints where account_id = ${accountId}) as touchpoints,
                 (select count(*)::int from contacts where account_id = ${accountId}) as contacts`,
    ).then((r) => r[0]),
  );

const STATEMENT_TIMEOUT = "canceling statement due to statement timeout";

/**
 * Fails the transaction the way a statement timeout does: on PostgreSQL for real (a sleep longer
 * than a local statement timeout, SQLSTATE 57014 through drizzle's wrapper); PGlite has no timer
 * to cancel a statement, so the same error is thrown as the driver would.
 */
async function timeOut(tx: Sql): Promise<never> {
  if (backend === "postgres") {
    await tx.execute(sql`set local statement_timeout = 20`);
    await tx.execute(sql`select pg_sleep(1)`);
  }
  throw Object.assign(new Error("Failed query: select pg_sleep(1)"), {
    cause: Object.assign(new Error(STATEMENT_TIMEOUT), { code: "57014" }),
  });
}

/** Whether this transaction wrote event `id` (its own uncommitted rows are visible to it). */
const wrote = async (tx: Sql, id: string) =>
  (await rows(tx, sql`select 1 from events where id = ${id}`)).length > 0;

describe("imports in batches on a live service", () => {
  test("a multi-batch import reports progress after every batch, the counts increasing", async () => {
    const { accountId } = await seedAccount(db);
    const progress: ImportProgress[] = [];
    // Default sizing: the first batch is 50 records and a batch at most doubles the last, so 300
    // records take at least three batches (50 + 100 + 150) whatever the machine's speed.
    const summary = await runImport(
      db,
      testSecrets,
      { kind: "events", account: accountId, file: eventsFile("progress.jsonl", 300) },
      (p) => progress.push(p),
    );
    assert.deepEqual(summary, { imported: 300, updated: 0, skipped: 0, errors: [] });
    assert.ok(progress.length >= 3, `${progress.length} progress reports`);
    // Two lanes on PostgreSQL may finish out of file order: the lines read never go back.
    for (let i = 1; i < progress.length; i++) {
      const [before, now] = [progress[i - 1], progress[i]];
      assert.ok(before && now && now.lines >= before.lines && now.imported > before.imported);
    }
    assert.equal(progress[0]?.imported, 50);
    assert.deepEqual(progress.at(-1), { lines: 300, imported: 300, updated: 0, skipped: 0, errors: 0 });
  });

  test("the admin socket relays each batch's progress to the CLI before the reply", async () => {
    const { accountId } = await seedAccount(db);
    const file = eventsFile("socket.jsonl", 12);
    const socketDir = mkdtempSync(join(dir, "data-"));
    const server = await lockDataDir(socketDir, async (_request, progress) => ({
      ok: true,
      // One lane: batches finish in file order (lanes: import-lanes.test.ts).
      result: await runImport(db, testSecrets, { kind: "events", account: accountId, file }, progress, {
        batchSize: 5,
        lanes: 1,
      }),
    }));
    try {
      const heard: unknown[] = [];
      const reply = await callAdminSocket(socketDir, "import", {}, (p) => heard.push(p));
      assert.deepEqual(
        heard.map((p) => [(p as ImportProgress).lines, (p as ImportProgress).imported]),
        [
          [5, 5],
          [10, 10],
          [12, 12],
        ],
      );
      assert.deepEqual(reply, { ok: true, result: { imported: 12, updated: 0, skipped: 0, errors: [] } });
    } finally {
      await releaseDataDir(server);
    }
  });

  test("a batch whose first attempt times out is written again, in halves, and lands once", async () => {
    const { accountId } = await seedAccount(db);
    const attempts: string[] = [];
    let failed = false;
    const summary = await runImport(
      db,
      testSecrets,
      { kind: "events", account: accountId, file: eventsFile("retry.jsonl", 12) },
      () => {},
      {
        batchSize: 4,
        // One lane: each transaction sees every earlier batch committed.
        lanes: 1,
        retry: { backoffMs: 1 },
        beforeCommit: async (tx) => {
          const ids = await rows<{ id: string }>(tx, sql`select id from events order by id`);
          attempts.push(ids.map((r) => r.id).join(","));
          // The second batch's first attempt, after its rows are written: they must roll back.
          if (!failed && (await wrote(tx, "e5"))) {
            failed = true;
            await timeOut(tx);
          }
        },
      },
    );
    assert.deepEqual(summary, { imported: 12, updated: 0, skipped: 0, errors: [] });
    // What each transaction saw before committing: the failed one, then its two halves.
    assert.deepEqual(attempts, [
      "e1,e2,e3,e4",
      "e1,e2,e3,e4,e5,e6,e7,e8",
      "e1,e2,e3,e4,e5,e6",
      "e1,e2,e3,e4,e5,e6,e7,e8",
      "e1,e10,e11,e12,e2,e3,e4,e5,e6,e7,e8,e9",
    ]);
    assert.deepEqual(await stored(accountId), {
      events: 12,
      distinct_ids: 12,
      touchpoints: 12,
      contacts: 12,
    });
  });

  test("a record that keeps timing out is reported by line; the rest of its batch and the file land", async () => {
    const { accountId } = await seedAccount(db);
    let tries = 0;
    const file = eventsFile("stuck.jsonl", 10, { 2: "{not json", 9: "[9]" });
    const summary = await runImport(db, testSecrets, { kind: "events", account: accountId, file }, () => {}, {
      batchSize: 4,
      retry: { backoffMs: 1 },
      beforeCommit: async (tx) => {
        if (await wrote(tx, "e5")) {
          tries += 1;
          await timeOut(tx);
        }
      },
    });
    // Batch {e1,e3,e4,e5} fails; {e1,e3} lands, {e4,e5} fails; {e4} lands, {e5} fails twice more.
    assert.equal(tries, 4);
    assert.deepEqual(summary.errors, [
      { line: 2, error: "not valid JSON" },
      { line: 5, error: `not imported after 4 attempts: ${STATEMENT_TIMEOUT}` },
      { line: 9, error: "not a JSON object" },
    ]);
    assert.deepEqual(
      { ...summary, errors: summary.errors.length },
      { imported: 7, updated: 0, skipped: 0, errors: 3 },
    );
    assert.deepEqual(await stored(accountId), { events: 7, distinct_ids: 7, touchpoints: 7, contacts: 7 });
    // A replay writes the stuck record now, and only it.
    const replay = await runImport(db, testSecrets, { kind: "events", account: accountId, file });
    assert.deepEqual(
      { ...replay, errors: replay.errors.length },
      { imported: 1, updated: 0, skipped: 7, errors: 2 },
    );
  });

  test("any other failure stops the import, as before: it is not a reason to write the batch again", async () => {
    const { accountId } = await seedAccount(db);
    let calls = 0;
    await assert.rejects(
      runImport(
        db,
        testSecrets,
        { kind: "events", account: accountId, file: eventsFile("boom.jsonl", 3) },
        () => {},
        {
          beforeCommit: async () => {
            calls += 1;
            throw new Error("boom");
          },
        },
      ),
      /boom/,
    );
    assert.equal(calls, 1);
    assert.deepEqual(await stored(accountId), { events: 0, distinct_ids: 0, touchpoints: 0, contacts: 0 });
  });
});

describe("the batch runner's rules", () => {
  test("batches aim at the target time: at most twice the last, smaller when slow (to a least), halved after a timeout", () => {
    const sizer = new BatchSizer({ targetMs: 50, initial: 50, min: 10, max: 500 });
    assert.equal(sizer.next(), 50);
    sizer.observe(50, 5); // 10 records/ms would fit 500: capped at twice the last
    assert.equal(sizer.next(), 100);
    sizer.observe(100, 10);
    assert.equal(sizer.next(), 200);
    sizer.observe(200, 10);
    assert.equal(sizer.next(), 400);
    sizer.observe(400, 10);
    assert.equal(sizer.next(), 500, "never above the kind's maximum");
    sizer.observe(500, 250); // 2 records/ms: 100 fit in 50 ms
    assert.equal(sizer.next(), 100);
    sizer.failed(100);
    assert.equal(sizer.next(), 50);
    sizer.observe(50, 10_000);
    assert.equal(sizer.next(), 10, "never below the least");
    sizer.failed(10);
    sizer.failed(5);
    sizer.failed(2);
    assert.equal(sizer.next(), 1, "after timeouts, down to one record");
    const fixed = new BatchSizer({ fixed: 7 });
    fixed.observe(7, 1);
    fixed.failed(7);
    assert.equal(fixed.next(), 7);
  });

  test("a fixed cost per batch above the target: batches grow until it is at most a third of their time", () => {
    // 400 ms per batch plus 1 ms per record, aimed at 100 ms: the target alone would keep 50.
    const sizer = new BatchSizer({ targetMs: 100, initial: 50, min: 50, max: 5_000 });
    const timeOf = (records: number) => 400 + records;
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const records = sizer.next();
      sizes.push(records);
      sizer.observe(records, timeOf(records));
    }
    // 50 over the target: 100 tried to tell the fixed part; then doubling up to 2 × 400 / 1 = 800.
    assert.deepEqual(sizes, [50, 100, 200, 400, 800, 800]);
  });

  test("what is retried: timeouts, lock waits, serialization failures, deadlocks, the driver's own timeouts", () => {
    const wrapped = (code: string) =>
      Object.assign(new Error("Failed query"), { cause: { code, message: "x" } });
    for (const code of ["57014", "55P03", "40001", "40P01"]) assert.equal(isRetryable(wrapped(code)), true);
    assert.equal(isRetryable(new Error("Query read timeout")), true);
    assert.equal(isRetryable(new Error("timeout exceeded when trying to connect")), true);
    assert.equal(isRetryable(wrapped("23505")), false, "a unique violation will fail again");
    assert.equal(isRetryable(new Error("boom")), false);
    assert.equal(isRetryable("57014"), false);
  });

  test("records are tried at most `attempts` times each, and nothing that failed is counted", async () => {
    const batch = [1, 2, 3].map((n) => ({ line: n * 10, record: n }));
    const calls: number[][] = [];
    const timeout = Object.assign(new Error("canceled"), { code: "57014" });
    const { result, errors } = await writeWithRetry(
      batch,
      async (records) => {
        calls.push(records);
        if (records.includes(3)) throw timeout;
        return { imported: records.length, updated: 0, skipped: 0 };
      },
      { attempts: 3, backoffMs: 0 },
    );
    assert.deepEqual(calls, [[1, 2, 3], [1, 2], [3], [3]]);
    assert.deepEqual(result, { imported: 2, updated: 0, skipped: 0, adsChanged: 0 });
    assert.deepEqual(errors, [{ line: 30, error: "not imported after 3 attempts: canceled" }]);
  });
});
