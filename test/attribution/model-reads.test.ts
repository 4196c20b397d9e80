import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type SQL, sql } from "drizzle-orm";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import {
  type JourneysParams,
  saleJourneys,
  unconvertedPaths,
} from "../../src/queries/attribution-journeys.ts";
import type { ReportWindow } from "../../src/reports/window.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";
import { ad, click, worked } from "../helpers/worked-example.ts";

/*
 * GET /attribution/models' speed (docs/attribution.md, "Speed"): at the ad and campaign levels the
 * reads of ad touches — each sale's journey, every touched contact's Markov path — are index-only
 * on touchpoints_ad_touch_idx (migration 0036 put the ad columns in it), and whether a conversion
 * was enriched is asked of events_utm_enriched_idx, not of every event of the server (a sequential
 * scan of events, once per request, was the plan without it). The planner is kept off sequential
 * scans: the test's tables are tiny, and the question is what the indexes can answer.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const window: ReportWindow = {
  from: "2026-03-01",
  to: "2026-03-31",
  timezone: "UTC",
  start: "2026-03-01T00:00:00Z",
  end: "2026-04-01T00:00:00Z",
  days: 31,
  today: "2026-03-31",
};

/** The plan of each statement `read` sends (and no rows). */
async function plans(read: (tx: Sql, accountId: string) => Promise<unknown>): Promise<string> {
  const { accountId } = await seedAccount(db);
  await loadFixture(db, accountId, worked);
  const found: string[] = [];
  await db.read(accountId, async (tx) => {
    await tx.execute(sql`set enable_seqscan = off`);
    const explaining = new Proxy(tx, {
      get(target, prop) {
        if (prop !== "execute") return Reflect.get(target, prop);
        return async (query: SQL) => {
          const lines = await rows<{ "QUERY PLAN": string }>(target, sql`explain ${query}`);
          found.push(lines.map((l) => l["QUERY PLAN"]).join("\n"));
          return { rows: [] };
        };
      },
    });
    await read(explaining, accountId);
  });
  return found.join("\n");
}

describe("the attribution models' reads", () => {
  for (const level of ["ad", "campaign"] as const) {
    const params: JourneysParams = { window, level, lookbackDays: 30 };

    test(`the sales' journeys at the ${level} level read the ad touches index-only`, async () => {
      // The explaining stand-in answers no row, which the journeys' statement never does.
      const plan = await plans((tx, accountId) => saleJourneys(tx, accountId, params).catch(() => null));
      assert.match(plan, /Index Only Scan using touchpoints_ad_touch_idx on touchpoints/, plan);
      assert.doesNotMatch(plan, /Seq Scan|Index Scan using \S+ on touchpoints/, plan);
      assert.match(plan, /Index Only Scan using events_utm_enriched_idx on events/, plan);
    });

    // Which index of touchpoints a range of the account's touches takes depends on the tables' sizes
    // (at scale, the ad touches' in contact order; here, tiny, either): the enriched events are the
    // question.
    test(`the Markov null paths at the ${level} level ask the enriched events of their index`, async () => {
      const plan = await plans((tx, accountId) => unconvertedPaths(tx, accountId, params).catch(() => null));
      assert.doesNotMatch(plan, /Seq Scan/, plan);
      assert.match(plan, /Index Only Scan using events_utm_enriched_idx on events/, plan);
    });
  }
});

/*
 * The Markov null paths are grouped in SQL from touches read in (contact, instant) order: touches
 * at the same instant still follow their keys (docs/attribution.md: "Markov paths break such ties
 * by key"), at each level. Dan, Eve and Fay click ads A (campaign C1) and Z (campaign C2) at the same
 * instant, then A again; Gil clicks Z only; none buys. Ann, who buys, walks no null path.
 */
test("the Markov null paths: each contact's touches in time order, ties by key, grouped by path", async () => {
  const { accountId } = await seedAccount(db);
  const tie = (who: string) => [
    click(`${who}-z`, `${who}@x.test`, "Z", "2026-03-08"),
    click(`${who}-a`, `${who}@x.test`, "A", "2026-03-08"),
    click(`${who}-a2`, `${who}@x.test`, "A", "2026-03-09"),
  ];
  await loadFixture(db, accountId, {
    ...worked,
    spend: [...(worked.spend ?? []), ad("Z", "2026-03-08", 10, { campaign_id: "C2", campaign_name: "Fall" })],
    touchpoints: [
      ...(worked.touchpoints ?? []),
      ...tie("dan"),
      ...tie("eve"),
      ...tie("fay"),
      click("gil-z", "gil@x.test", "Z", "2026-03-10"),
    ],
  });
  const paths = async (level: "ad" | "campaign") =>
    (
      await db.read(accountId, (tx) => unconvertedPaths(tx, accountId, { window, level, lookbackDays: 30 }))
    ).paths.sort((a, b) => b.contacts - a.contacts);
  assert.deepEqual(await paths("campaign"), [
    { keys: ["meta/C1", "meta/C2", "meta/C1"], contacts: 3 },
    { keys: ["meta/C2"], contacts: 1 },
  ]);
  assert.deepEqual(await paths("ad"), [
    { keys: ["meta/A", "meta/Z", "meta/A"], contacts: 3 },
    { keys: ["meta/Z"], contacts: 1 },
  ]);
});

/*
 * A sale's journey is read from the index in time order, then ordered by key among touches at the
 * same instant, its instants beside its keys. Hal, Ivy, Jon and Kim each click ads Z (campaign C2)
 * and A (campaign C1) at the same instant, then A again, and buy (four, so that an order left to
 * the touches' random ids would show).
 */
test("a sale's journey: its touches in time order, ties by key, each with its instant", async () => {
  const { accountId } = await seedAccount(db);
  const buyers = ["hal", "ivy", "jon", "kim"];
  await loadFixture(db, accountId, {
    spend: [...(worked.spend ?? []), ad("Z", "2026-03-08", 10, { campaign_id: "C2", campaign_name: "Fall" })],
    touchpoints: buyers.flatMap((who) => [
      click(`${who}-z`, `${who}@x.test`, "Z", "2026-03-08"),
      click(`${who}-a`, `${who}@x.test`, "A", "2026-03-08"),
      click(`${who}-a2`, `${who}@x.test`, "A", "2026-03-09"),
    ]),
    events: buyers.map((who, i) => ({
      id: `${who}-s`,
      event_type: "sale",
      event_datetime: `2026-03-1${i}T10:00:00Z`,
      contact_email: `${who}@x.test`,
      amount: 300,
    })),
  });
  const journeys = (level: "ad" | "campaign") =>
    db.read(
      accountId,
      async (tx) => (await saleJourneys(tx, accountId, { window, level, lookbackDays: 30 })).sales,
    );
  const day8 = Date.parse("2026-03-08T10:00:00Z");
  const day9 = Date.parse("2026-03-09T10:00:00Z");
  assert.deepEqual(
    await journeys("campaign"),
    buyers.map((who, i) => ({
      sale_id: `${who}-s`,
      at: Date.parse(`2026-03-1${i}T10:00:00Z`),
      revenue: 300,
      net: 300,
      keys: ["meta/C1", "meta/C2", "meta/C1"],
      ats: [day8, day8, day9],
    })),
  );
  assert.deepEqual(
    (await journeys("ad")).map((s) => s.keys),
    buyers.map(() => ["meta/A", "meta/Z", "meta/A"]),
  );
});
