import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import type { Numbered } from "../../src/import/batch-runner.ts";
import { foldBacklog } from "../../src/import/fold-backlog.ts";
import { ImportLanes } from "../../src/import/import-lanes.ts";
import { runImport } from "../../src/import/run-import.ts";
import { backend, openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

/** A record of the unit tests: its name, and the keys it shares with others (null: everything). */
interface Rec {
  name: string;
  keys: string[] | null;
}

/**
 * Lanes over a write that the test finishes by hand: `batches` lists each write as it starts
 * (names, in order), `running` the writes started and not finished, `finish(i)` ends write i.
 */
function harness(count: number) {
  const batches: string[][] = [];
  const ends: (() => void)[] = [];
  const fails: ((err: Error) => void)[] = [];
  const running = new Set<number>();
  let mostAtOnce = 0;
  let replaced = 0;
  const lanes = new ImportLanes<Rec>(count, {
    identity: (r) => r.name,
    keys: (r) => r.keys,
    write: (batch: Numbered<Rec>[]) => {
      const i = batches.length;
      batches.push(batch.map((b) => b.record.name));
      running.add(i);
      mostAtOnce = Math.max(mostAtOnce, running.size);
      return new Promise<void>((resolve, reject) => {
        ends[i] = () => {
          running.delete(i);
          resolve();
        };
        fails[i] = (err) => {
          running.delete(i);
          reject(err);
        };
      });
    },
    onReplaced: () => {
      replaced += 1;
    },
  });
  let line = 0;
  return {
    lanes,
    batches,
    running,
    add: (name: string, keys: string[] | null, batchSize = 2) =>
      lanes.add({ line: ++line, record: { name, keys } }, batchSize),
    finish: (i: number) => ends[i]?.(),
    fail: (i: number, err: Error) => fails[i]?.(err),
    mostAtOnce: () => mostAtOnce,
    replaced: () => replaced,
  };
}

/** Lets the promise callbacks of finished writes run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("import lanes (unit)", () => {
  test("batches of records with disjoint keys are written two at a time", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    // The first lane is full and written; new records fill the second.
    assert.deepEqual(h.batches, [["a1", "b1"]]);
    await h.add("c1", ["contact:c"]);
    await h.add("d1", ["contact:d"]);
    assert.deepEqual(h.batches, [
      ["a1", "b1"],
      ["c1", "d1"],
    ]);
    assert.equal(h.running.size, 2);
    h.finish(0);
    h.finish(1);
    await h.lanes.drain();
    assert.equal(h.mostAtOnce(), 2);
  });

  test("a record goes to the lane holding its contact, after that lane's batch, never beside it", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    // Lane 0 writes {a1, b1}. a2 shares a's contact: it waits in lane 0, not in the idle lane 1.
    await h.add("a2", ["contact:a"]);
    await h.add("c1", ["contact:c"]);
    await h.add("d1", ["contact:d"]);
    assert.deepEqual(h.batches, [
      ["a1", "b1"],
      ["c1", "d1"],
    ]);
    // Lane 0's next batch (a2, e1) waits for its first to be written.
    const adding = h.add("e1", ["contact:a", "contact:e"]);
    await settle();
    assert.deepEqual(h.batches.length, 2);
    h.finish(0);
    await adding;
    assert.deepEqual(h.batches[2], ["a2", "e1"]);
    h.finish(1);
    h.finish(2);
    await h.lanes.drain();
  });

  test("once its lane's batch is written, a contact's next record may go to either lane", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    h.finish(0);
    await settle();
    // Lane 1 is the one filling; a is no longer held anywhere.
    await h.add("a2", ["contact:a"]);
    await h.add("c1", ["contact:c"]);
    assert.deepEqual(h.batches, [
      ["a1", "b1"],
      ["a2", "c1"],
    ]);
    h.finish(1);
    await h.lanes.drain();
  });

  test("a record whose keys two lanes hold waits for both to be written", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    await h.add("c1", ["contact:c"]);
    // Lane 0 writes {a1, b1}; lane 1 holds c1. ac bridges a and c.
    const adding = h.add("ac", ["contact:a", "contact:c"]);
    await settle();
    // Lane 1 was written so that both could end; nothing goes on until they have.
    assert.deepEqual(h.batches, [["a1", "b1"], ["c1"]]);
    h.finish(1);
    await settle();
    h.finish(0);
    await adding;
    await h.add("d1", ["contact:d"]);
    assert.deepEqual(h.batches.at(-1), ["ac", "d1"]);
    h.finish(2);
    await h.lanes.drain();
  });

  test("a record that conflicts with everything is written alone, and what follows waits for it", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    await h.add("c1", ["contact:c"]);
    const adding = h.add("x", null);
    await settle();
    assert.deepEqual(h.batches, [["a1", "b1"], ["c1"]]);
    h.finish(0);
    h.finish(1);
    await adding;
    // d1 shares nothing with x, but x's lane holds everything until its batch is written.
    await h.add("d1", ["contact:d"]);
    assert.deepEqual(h.batches.at(-1), ["x", "d1"]);
    await h.add("e1", ["contact:e"]);
    // e1 and f1 fill the same lane, behind x's batch: the full lane waits for it.
    const waiting = h.add("f1", ["contact:f"]);
    await settle();
    assert.equal(h.batches.length, 3);
    h.finish(2);
    await waiting;
    assert.deepEqual(h.batches.at(-1), ["e1", "f1"]);
    h.finish(3);
    await h.lanes.drain();
  });

  test("a record named twice before its batch is written keeps its last version", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"], 3);
    await h.add("b1", ["contact:b"], 3);
    await h.add("a1", ["contact:z"], 3);
    await h.add("c1", ["contact:c"], 3);
    assert.deepEqual(h.batches, [["b1", "a1", "c1"]]);
    assert.equal(h.replaced(), 1);
    h.finish(0);
    await h.lanes.drain();
  });

  test("a failed write stops the import once the other lane's write has ended", async () => {
    const h = harness(2);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    await h.add("c1", ["contact:c"]);
    await h.add("d1", ["contact:d"]);
    assert.equal(h.running.size, 2);
    h.fail(0, new Error("disk full"));
    let stopped = false;
    const draining = h.lanes.drain().finally(() => {
      stopped = true;
    });
    draining.catch(() => {});
    await settle();
    // Nothing of the import is still being written when it reports its failure.
    assert.equal(stopped, false);
    h.finish(1);
    await assert.rejects(draining, /disk full/);
  });

  test("one lane writes one batch at a time, in file order", async () => {
    const h = harness(1);
    await h.add("a1", ["contact:a"]);
    await h.add("b1", ["contact:b"]);
    await h.add("c1", ["contact:c"]);
    const adding = h.add("d1", ["contact:d"]);
    await settle();
    assert.equal(h.batches.length, 1);
    h.finish(0);
    await adding;
    h.finish(1);
    await h.lanes.drain();
    assert.deepEqual(h.batches, [
      ["a1", "b1"],
      ["c1", "d1"],
    ]);
    assert.equal(h.mostAtOnce(), 1);
  });
});

/*
 * The same file imported with one lane and with two: every stored row the ingest and its triggers
 * compute (contacts, events and their sale counting, milestones, activity, customer totals, the
 * rollups) is the same. Lanes are only used on PostgreSQL (PGlite has one connection).
 */
describe("import lanes (PostgreSQL)", { skip: backend !== "postgres" }, () => {
  let db: Database;
  let dir: string;
  before(async () => {
    db = await openTestDatabase();
    dir = mkdtempSync(join(tmpdir(), "ascribe-import-lanes-"));
  });
  after(async () => {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * 40 contacts (a fifth known by phone only) with leads, bookings, sales, payments and refunds;
   * a sale without a contact; an event sent again later with another amount.
   */
  function eventsFile(): string {
    const lines: object[] = [];
    const contact = (c: number) =>
      c % 5 === 0
        ? { contact_phone: `+3361234${String(c).padStart(4, "0")}` }
        : { contact_email: `p${c}@example.com` };
    // Four contacts at a time, their events in time order: one contact's events fall in two or
    // three consecutive batches, which two lanes would otherwise write at once.
    for (let group = 0; group < 40; group += 4) {
      for (let step = 0; step < 6; step++) {
        for (let c = group; c < group + 4; c++) {
          const at = `2026-02-${String(1 + step * 4 + (c % 4)).padStart(2, "0")}T${String(8 + (c % 10)).padStart(2, "0")}:00:00Z`;
          const base = { event_datetime: at, ...contact(c), utm_source: c % 2 ? "facebook" : "google" };
          const type = ["lead", "application", "booking", "sale", "payment", "refund"][step] as string;
          if (type === "refund" && c % 3 !== 0) continue;
          if ((type === "sale" || type === "payment") && c % 4 === 3) continue;
          lines.push({
            id: `ev-${c}-${step}`,
            event_type: type === "refund" ? "payment" : type,
            ...base,
            ...(type === "sale" ? { amount: 1000 + c, product_key: c % 2 ? "coaching" : "course" } : {}),
            ...(type === "payment" ? { amount: 250, product_key: "coaching" } : {}),
            ...(type === "refund"
              ? { amount: -250, payment_status: "refunded", product_key: "coaching" }
              : {}),
            ...(type === "booking" ? { booking_date: at.slice(0, 10), booking_time: "10:00" } : {}),
          });
          if (step === 2 && c === 20)
            lines.push({ id: "ev-nocontact", event_type: "sale", event_datetime: at, amount: 500 });
        }
      }
    }
    // A later version of an early event.
    lines.push({
      id: "ev-1-3",
      event_type: "sale",
      event_datetime: "2026-02-14T09:00:00Z",
      ...contact(1),
      amount: 4321,
    });
    const path = join(dir, "events.jsonl");
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    return path;
  }

  /** Everything the import computed for the account, with contacts named by email or phone. */
  async function state(accountId: string) {
    await foldBacklog(db, accountId);
    return db.admin(accountId, async (tx) => {
      const q = (text: string) =>
        rows(tx, sql.raw(text.replaceAll("$account", `'${accountId}'`))).then((r) => JSON.stringify(r));
      const who = "coalesce(c.email, c.phone)";
      return {
        contacts: await q(
          `select email, phone, name from contacts where account_id = $account order by 1, 2`,
        ),
        events: await q(
          `select e.id, ${who} as who, e.event_type, e.amount, e.counted, e.drop_reason, e.group_key,
                  e.contact_seq, e.group_revenue, e.group_refunds, e.record_ad_id, e.first_touch_ad
           from events e left join contacts c on c.account_id = e.account_id and c.id = e.contact_id
           where e.account_id = $account order by e.id`,
        ),
        milestones: await q(
          `select ${who} as who, m.first_lead_at, m.lead_source, m.application_at, m.booking_at, m.sale_at,
                  m.sale_product_key, m.stage, m.first_sale_at, m.cycle_started_at
           from contact_milestones m join contacts c on c.account_id = m.account_id and c.id = m.contact_id
           where m.account_id = $account order by 1`,
        ),
        activity: await q(
          `select ${who} as who, a.first_event_at, a.last_event_at
           from contact_activity a join contacts c on c.account_id = a.account_id and c.id = a.contact_id
           where a.account_id = $account order by 1`,
        ),
        totals: await q(
          `select ${who} as who, t.first_event_type, t.first_event_at, t.first_payment_at, t.total_revenue,
                  t.total_purchases, t.products
           from customer_totals t join contacts c on c.account_id = t.account_id and c.id = t.contact_id
           where t.account_id = $account order by 1`,
        ),
        rollup: await q(
          `select dim, day, key, leads, applications, bookings, sales, revenue, refunds, meetings
           from report_rollup_daily where account_id = $account order by dim, day, key`,
        ),
      };
    });
  }

  test("two lanes store what one lane stores", async () => {
    const file = eventsFile();
    const one = await seedAccount(db);
    const two = await seedAccount(db);
    const options = { batchSize: 9 };
    const a = await runImport(db, testSecrets, { kind: "events", account: one.accountId, file }, () => {}, {
      ...options,
      lanes: 1,
    });
    const b = await runImport(db, testSecrets, { kind: "events", account: two.accountId, file }, () => {}, {
      ...options,
      lanes: 2,
    });
    assert.deepEqual(b, a);
    assert.equal(a.errors.length, 0);
    const [expected, actual] = [await state(one.accountId), await state(two.accountId)];
    for (const part of Object.keys(expected) as (keyof typeof expected)[]) {
      assert.equal(actual[part], expected[part], part);
    }
    // The file's own figures, by hand: 40 contacts; the later version of ev-1-3 replaced the first.
    assert.equal(JSON.parse(expected.contacts).length, 40);
    const events = JSON.parse(expected.events) as { id: string; amount: string | number }[];
    assert.equal(Number(events.find((e) => e.id === "ev-1-3")?.amount), 4321);
  });

  test("a sale without a contact is written while no other batch of the import is open", async () => {
    const { accountId } = await seedAccount(db);
    // Leads of 60 contacts, and every tenth line a sale without a contact.
    const lines = Array.from({ length: 60 }, (_, i) =>
      i % 10 === 5
        ? { id: `sale-${i}`, event_type: "sale", event_datetime: "2026-02-02T10:00:00Z", amount: 100 }
        : {
            id: `lead-${i}`,
            event_type: "lead",
            event_datetime: "2026-02-01T10:00:00Z",
            contact_email: `l${i}@example.com`,
          },
    );
    const path = join(dir, "contactless.jsonl");
    writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    // In the transaction that wrote one: how many others of this database are writing these tables.
    const othersWriting: number[] = [];
    await runImport(db, testSecrets, { kind: "events", account: accountId, file: path }, () => {}, {
      batchSize: 3,
      lanes: 2,
      beforeCommit: async (tx) => {
        const [mine] = await rows<{ n: number }>(
          tx,
          sql`select count(*)::int as n from events
              where contact_id is null and xmin = pg_current_xact_id()::xid`,
        );
        if (!mine?.n) return;
        const [others] = await rows<{ n: number }>(
          tx,
          sql`select count(distinct l.pid)::int as n from pg_locks l join pg_class c on c.oid = l.relation
              where c.relname in ('contacts', 'touchpoints', 'events') and l.mode = 'RowExclusiveLock'
                and l.pid <> pg_backend_pid()
                and l.database = (select oid from pg_database where datname = current_database())`,
        );
        othersWriting.push(others?.n ?? -1);
      },
    });
    assert.deepEqual(othersWriting, [0, 0, 0, 0, 0, 0]);
  });
});
