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

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
const milestoneSnapshot = (accountId: string) =>
  db.tenant(accountId, (tx) =>
    rows<Record<string, unknown>>(
      tx,
      sql`select ${iso("first_lead_at")} as first_lead_at, ${iso("application_at")} as application_at,
                 ${iso("booking_at")} as booking_at, ${iso("show_at")} as show_at, stage,
                 ${iso("sale_at")} as sale_at, sale_product_key, ${iso("first_sale_at")} as first_sale_at,
                 ${iso("cycle_started_at")} as cycle_started_at, ${iso("last_application_at")} as last_application_at,
                 ${iso("last_booking_at")} as last_booking_at
          from contact_milestones where account_id = ${accountId} order by contact_id`,
    ),
  );

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

  // Ann's milestones after all that: her first lead is now l1 on 3 March, so the booking b1 (2 March)
  // precedes it and, cancelled, is no meeting; s1 is her first counted sale and opens her cycle at l1.
  const milestones = await milestoneSnapshot(a);
  assert.deepEqual(milestones, [
    {
      first_lead_at: "2026-03-03T10:00:00Z",
      application_at: null,
      booking_at: null,
      show_at: null,
      stage: 5,
      sale_at: "2026-03-06T09:00:00Z",
      sale_product_key: "coaching",
      first_sale_at: "2026-03-06T09:00:00Z",
      cycle_started_at: "2026-03-03T10:00:00Z",
      last_application_at: null,
      last_booking_at: "2026-03-02T09:00:00Z",
    },
  ]);

  await db.admin(a, (tx) => tx.execute(sql`select ascribe_rebuild_report_rollup(${a}::uuid)`));
  assert.deepEqual(await snapshot(a), maintained);
  assert.deepEqual(await milestoneSnapshot(a), milestones);
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

interface TouchpointRow {
  day: string;
  kind: string;
  ad: string;
  source: string;
  campaign: string;
  touchpoints: number;
}
interface SessionRow {
  day: string;
  session_key: string;
  touchpoints: number;
  with_id: number;
}

const touchpointSnapshot = (accountId: string) =>
  db.tenant(accountId, async (tx) => {
    await foldReportRollup(tx, accountId);
    const tps = await rows<TouchpointRow>(
      tx,
      sql`select to_char(day, 'YYYY-MM-DD') as day, kind, platform || '/' || ad_id as ad, source, campaign,
                 touchpoints
          from touchpoint_rollup_daily where account_id = ${accountId} and touchpoints <> 0
          order by day, kind, ad, source, campaign`,
    );
    const sessions = await rows<SessionRow>(
      tx,
      sql`select to_char(day, 'YYYY-MM-DD') as day, session_key, touchpoints, with_id
          from web_session_daily where account_id = ${accountId} and (touchpoints, with_id) <> (0, 0)
          order by day, session_key`,
    );
    const perDay = await rows<{ day: string; web_sessions: number; web_sessions_with_id: number }>(
      tx,
      sql`select to_char(day, 'YYYY-MM-DD') as day, web_sessions, web_sessions_with_id
          from report_rollup_daily
          where account_id = ${accountId} and dim = 'total' and (web_sessions, web_sessions_with_id) <> (0, 0)
          order by day`,
    );
    return { tps, sessions, perDay };
  });

test("the touchpoint and session rollups follow inserts, replays, re-resolution and deletes, and equal a rebuild", async () => {
  const account = await seedAccount(db, { timezone: "Europe/Paris" });
  const a = account.accountId;
  const visit = (id: string, occurredAt: string, extra: Record<string, unknown> = {}) => ({
    id,
    visitor_id: "v1",
    session_id: "s1",
    kind: "web",
    event_type: "page_view",
    occurred_at: occurredAt,
    ...extra,
  });
  await loadFixture(db, a, {
    touchpoints: [
      // 23:30 UTC on 1 March is 2 March in Paris: both on the 2nd, one session.
      visit("t1", "2026-03-01T23:30:00Z", {
        utm_source: "fb",
        utm_campaign: "Spring",
        utm_content: "Ad One",
      }),
      visit("t2", "2026-03-02T10:00:00Z", { channel: "organic" }),
      // The same session the next day, with a click id; a touchpoint without a session.
      visit("t3", "2026-03-03T10:00:00Z", { fbclid: "IwAR1" }),
      visit("t4", "2026-03-03T11:00:00Z", { session_id: undefined }),
    ],
  });
  const first = await touchpointSnapshot(a);
  assert.deepEqual(first.tps, [
    { day: "2026-03-02", kind: "web", ad: "/", source: "fb", campaign: "Spring", touchpoints: 1 },
    { day: "2026-03-02", kind: "web", ad: "/", source: "organic", campaign: "", touchpoints: 1 },
    { day: "2026-03-03", kind: "web", ad: "/", source: "(none)", campaign: "", touchpoints: 2 },
  ]);
  assert.equal(first.sessions.length, 3);
  assert.deepEqual(first.sessions.slice(0, 2), [
    { day: "2026-03-02", session_key: "s1", touchpoints: 2, with_id: 0 },
    { day: "2026-03-03", session_key: "s1", touchpoints: 1, with_id: 1 },
  ]);
  assert.match(first.sessions[2]?.session_key ?? "", /^tp:/);
  // Sessions per day (split at midnight): s1 on the 2nd; s1 again and t4 alone on the 3rd.
  assert.deepEqual(first.perDay, [
    { day: "2026-03-02", web_sessions: 1, web_sessions_with_id: 0 },
    { day: "2026-03-03", web_sessions: 2, web_sessions_with_id: 1 },
  ]);

  // An ad that makes "Ad One" resolvable (re-resolution updates t1), a replay moving t2 to the 4th,
  // a deleted touchpoint.
  await loadFixture(db, a, {
    spend: [{ platform: "meta", ad_id: "A1", ad_name: "Ad One", date: "2026-03-01", total_spend: 10 }],
    touchpoints: [visit("t2", "2026-03-04T10:00:00Z", { channel: "organic" })],
  });
  await db.admin(a, (tx) =>
    tx.execute(sql`delete from touchpoints where account_id = ${a} and external_id = 't4'`),
  );

  const maintained = await touchpointSnapshot(a);
  assert.deepEqual(maintained.tps, [
    { day: "2026-03-02", kind: "web", ad: "meta/A1", source: "fb", campaign: "Spring", touchpoints: 1 },
    { day: "2026-03-03", kind: "web", ad: "/", source: "(none)", campaign: "", touchpoints: 1 },
    { day: "2026-03-04", kind: "web", ad: "/", source: "organic", campaign: "", touchpoints: 1 },
  ]);
  assert.deepEqual(maintained.sessions, [
    { day: "2026-03-02", session_key: "s1", touchpoints: 1, with_id: 0 },
    { day: "2026-03-03", session_key: "s1", touchpoints: 1, with_id: 1 },
    { day: "2026-03-04", session_key: "s1", touchpoints: 1, with_id: 0 },
  ]);
  assert.deepEqual(maintained.perDay, [
    { day: "2026-03-02", web_sessions: 1, web_sessions_with_id: 0 },
    { day: "2026-03-03", web_sessions: 1, web_sessions_with_id: 1 },
    { day: "2026-03-04", web_sessions: 1, web_sessions_with_id: 0 },
  ]);

  await db.admin(a, (tx) => tx.execute(sql`select ascribe_rebuild_report_rollup(${a}::uuid)`));
  assert.deepEqual(await touchpointSnapshot(a), maintained);
});

test("a fold done in small chunks folds every delta: the rollup equals a rebuild", async () => {
  const account = await seedAccount(db);
  const a = account.accountId;
  await loadFixture(db, a, {
    touchpoints: Array.from({ length: 7 }, (_, i) => ({
      id: `t${i}`,
      visitor_id: `v${i}`,
      session_id: `s${i % 3}`,
      kind: "web",
      event_type: "page_view",
      occurred_at: `2026-03-0${(i % 2) + 1}T10:00:00Z`,
    })),
    events: Array.from({ length: 7 }, (_, i) => ({
      id: `l${i}`,
      event_type: "lead",
      event_datetime: `2026-03-0${(i % 2) + 1}T10:00:00Z`,
      contact_email: `c${i}@x.test`,
    })),
  });
  const chunked = await db.tenant(a, async (tx) => {
    await foldReportRollup(tx, a, { chunk: 2 });
    return rows<{ day: string; leads: number; web_sessions: number }>(
      tx,
      sql`select to_char(day, 'YYYY-MM-DD') as day, leads, web_sessions from report_rollup_daily
          where account_id = ${a} and dim = 'total' order by day`,
    );
  });
  // 1 March: leads l0 l2 l4 l6, sessions s0 s2 s1 (t0 t2 t4 t6); 2 March: l1 l3 l5, s1 s0 s2.
  assert.deepEqual(chunked, [
    { day: "2026-03-01", leads: 4, web_sessions: 3 },
    { day: "2026-03-02", leads: 3, web_sessions: 3 },
  ]);
});
