import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { recomputeSaleCounts } from "../../src/ingest/recompute-sale-counts.ts";
import { foldReportRollup } from "../../src/queries/fold-report-rollup.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface RollupRow {
  dim: string;
  day: string;
  key: string;
  leads: number;
  bookings: number;
  sales: number;
  revenue: number;
  refunds: number;
  meetings: number;
}

const snapshot = (accountId: string) =>
  db.tenant(accountId, async (tx) => {
    await foldReportRollup(tx, accountId);
    return rows<RollupRow>(
      tx,
      sql`select dim, to_char(day, 'YYYY-MM-DD') as day, key, leads, bookings, sales,
                 revenue::float8 as revenue, refunds::float8 as refunds, meetings
          from report_rollup_daily
          where account_id = ${accountId}
            and (leads, applications, bookings, no_shows, cancels, sales_lost, sales, revenue, refunds,
                 disputes, meetings) is distinct from (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
          order by dim, day, key`,
    );
  });

test("the rollup follows every kind of write to events, and equals a rebuild from scratch", async () => {
  const account = await seedAccount(db, { timezone: "Europe/Paris" });
  const a = account.accountId;
  await loadFixture(db, a, {
    events: [
      // 23:30 UTC on 1 March is 2 March in Paris.
      {
        id: "l1",
        event_type: "lead",
        event_datetime: "2026-03-01T23:30:00Z",
        contact_email: "ann@x.test",
        utm_source: "fb",
        utm_content: "Ad One",
      },
      {
        id: "b1",
        event_type: "booking",
        event_datetime: "2026-03-02T09:00:00Z",
        contact_email: "ann@x.test",
        booking_date: "2026-03-05",
        assigned_user_name: "Yan",
      },
      {
        id: "s1",
        event_type: "sale",
        event_datetime: "2026-03-06T09:00:00Z",
        contact_email: "ann@x.test",
        amount: 900,
        product_key: "coaching",
      },
      {
        id: "p1",
        event_type: "payment",
        event_datetime: "2026-03-07T09:00:00Z",
        contact_email: "ann@x.test",
        amount: 100,
        payment_status: "paid",
        product_key: "coaching",
      },
    ],
  });
  const total = (r: RollupRow[]) => r.filter((x) => x.dim === "total");
  assert.deepEqual(total(await snapshot(a)), [
    {
      dim: "total",
      day: "2026-03-02",
      key: "",
      leads: 1,
      bookings: 1,
      sales: 0,
      revenue: 0,
      refunds: 0,
      meetings: 0,
    },
    {
      dim: "total",
      day: "2026-03-05",
      key: "",
      leads: 0,
      bookings: 0,
      sales: 0,
      revenue: 0,
      refunds: 0,
      meetings: 1,
    },
    // p1 is s1's installment: the purchase's revenue sits on s1's day.
    {
      dim: "total",
      day: "2026-03-06",
      key: "",
      leads: 0,
      bookings: 0,
      sales: 1,
      revenue: 1000,
      refunds: 0,
      meetings: 0,
    },
  ]);

  // A replay that changes an event (updates), a refund (sale counting updates s1), an ad that makes
  // "Ad One" resolvable (re-resolution updates l1), a deleted event, a cancelled booking.
  await loadFixture(db, a, {
    spend: [{ platform: "meta", ad_id: "A1", ad_name: "Ad One", date: "2026-03-01", total_spend: 10 }],
    events: [
      {
        id: "l1",
        event_type: "lead",
        event_datetime: "2026-03-03T10:00:00Z",
        contact_email: "ann@x.test",
        utm_source: "fb",
        utm_content: "Ad One",
      },
      {
        id: "r1",
        event_type: "payment",
        event_datetime: "2026-03-20T09:00:00Z",
        contact_email: "ann@x.test",
        amount: 250,
        payment_status: "refunded",
        product_key: "coaching",
      },
      {
        id: "b1",
        event_type: "booking",
        event_datetime: "2026-03-02T09:00:00Z",
        contact_email: "ann@x.test",
        booking_date: "2026-03-05",
        assigned_user_name: "Yan",
        cancelled_at: "2026-03-04T09:00:00Z",
      },
    ],
  });
  await db.admin(a, (tx) => tx.execute(sql`delete from events where account_id = ${a} and id = 'p1'`));
  await db.tenant(a, (tx) => recomputeSaleCounts(tx, a));

  const maintained = await snapshot(a);
  assert.deepEqual(total(maintained), [
    {
      dim: "total",
      day: "2026-03-02",
      key: "",
      leads: 0,
      bookings: 1,
      sales: 0,
      revenue: 0,
      refunds: 0,
      meetings: 0,
    },
    {
      dim: "total",
      day: "2026-03-03",
      key: "",
      leads: 1,
      bookings: 0,
      sales: 0,
      revenue: 0,
      refunds: 0,
      meetings: 0,
    },
    {
      dim: "total",
      day: "2026-03-06",
      key: "",
      leads: 0,
      bookings: 0,
      sales: 1,
      revenue: 900,
      refunds: 250,
      meetings: 0,
    },
  ]);
  assert.deepEqual(
    maintained.filter((x) => x.dim === "ad" && x.leads > 0).map((x) => [x.day, x.key]),
    [["2026-03-03", "meta/A1"]],
  );

  await db.admin(a, (tx) => tx.execute(sql`select ascribe_rebuild_report_rollup(${a}::uuid)`));
  assert.deepEqual(await snapshot(a), maintained);
});

test("concurrent writers of one account never wait on each other's rollup rows; every event is counted", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  // Eight transactions at once, each writing leads and sales on the same days in a different order:
  // with the rollup updated in place they would lock its rows in crossing orders and deadlock.
  await Promise.all(
    Array.from({ length: 8 }, (_, writer) =>
      loadFixture(db, a, {
        events: [1, 2, 3, 4].flatMap((n) => {
          const day = ((n + writer) % 4) + 1;
          return [
            {
              id: `l${writer}-${n}`,
              event_type: "lead",
              event_datetime: `2026-03-0${day}T10:00:00Z`,
              contact_email: `w${writer}@x.test`,
            },
            {
              id: `s${writer}-${n}`,
              event_type: "sale",
              event_datetime: `2026-03-0${day}T11:00:00Z`,
              contact_email: `w${writer}n${n}@x.test`,
              amount: 10,
            },
          ];
        }),
      }),
    ),
  );
  assert.deepEqual(
    (await snapshot(a)).filter((x) => x.dim === "total").map((x) => [x.day, x.leads, x.sales, x.revenue]),
    [
      ["2026-03-01", 8, 8, 80],
      ["2026-03-02", 8, 8, 80],
      ["2026-03-03", 8, 8, 80],
      ["2026-03-04", 8, 8, 80],
    ],
  );
});
