import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { type ImportKind, importKinds } from "../../src/import/kinds.ts";
import { runImport } from "../../src/import/run-import.ts";
import { backend, seedAccount, testSecrets, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";
import { ad, click, worked } from "../helpers/worked-example.ts";

/*
 * The per-sale models' credit is stored by day (migration 0040) and read back while nothing it was
 * computed from has changed. Each test first plants a false credit in the stored day of Ann's sale
 * (March 12 of the worked example): a request that answers it shows the stored day was read; one
 * that answers the true figures after a change shows the change staled it.
 */

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });
const MARCH = "?from=2026-03-01&to=2026-03-31";

/** All of the sale to ad A: what no model would give after B's touch. */
const PLANTED = {
  keys: { "meta/A": [1, 1500, 1300] },
  untouched: [0, 0, 0],
  all: [1, 150000, 130000],
  paths: 1,
};

async function worksOn(fixture = worked) {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, fixture);
  const key = await account.key(["read:attribution"]);
  const credit = async (query: string) => {
    const r = await env.get(key, `/attribution/models${MARCH}&${query}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.map((row: Record<string, unknown>) => [
      row.key,
      row.credited_sales,
      row.credited_revenue,
      row.credited_net_revenue,
    ]);
  };
  const plant = (level: string, model: string, credit: unknown = PLANTED) =>
    env.db.admin(account.accountId, (tx) =>
      rows(
        tx,
        sql`update attribution_day_credits set credit = ${JSON.stringify(credit)}::jsonb
            where account_id = ${account.accountId} and level = ${level} and model = ${model} and day = '2026-03-12'
            returning day`,
      ),
    );
  return { ...account, credit, plant };
}

const planted = [
  ["meta/A", 1, 1500, 1300],
  ["meta/B", 0, 0, 0],
];

describe("the models' credit stored by day", () => {
  test("a window's days are stored once computed and read back while nothing changed", async () => {
    const account = await worksOn();
    // Linear: A and B half each of 1500 (net 1300).
    const linear = [
      ["meta/A", 0.5, 750, 650],
      ["meta/B", 0.5, 750, 650],
    ];
    assert.deepEqual(await account.credit("model=linear"), linear);
    const stored = await env.db.admin(account.accountId, (tx) =>
      rows<{ days: number; tz: string }>(
        tx,
        sql`select count(*)::int as days, min(timezone) as tz from attribution_day_credits
            where account_id = ${account.accountId} and level = 'ad' and model = 'linear' and lookback_days = 30`,
      ),
    );
    assert.deepEqual(stored, [{ days: 31, tz: "UTC" }]);
    assert.deepEqual(await account.plant("ad", "linear"), [{ day: "2026-03-12" }]);
    assert.deepEqual(await account.credit("model=linear"), planted);
    // Another model's, level's or setting's days are their own.
    assert.deepEqual(await account.credit("model=linear&lookback_days=31"), linear);
    assert.deepEqual(await account.credit("model=time_decay&half_life_days=3"), [
      // 2^(−10/3) : 2^(−8/3) = 1 : 2^(2/3) = 0.386488 : 0.613512; of 1500: 579.73 and 920.27 (its
      // extra cent by largest remainder), of 1300: 502.43 and 797.57
      ["meta/B", 0.6135, 920.27, 797.57],
      ["meta/A", 0.3865, 579.73, 502.43],
    ]);
  });

  test("a new touch before the sale stales its day (and not the days before it)", async () => {
    const account = await worksOn();
    await account.credit("model=linear");
    await account.plant("ad", "linear");
    const before = await env.db.admin(account.accountId, (tx) =>
      rows<{ day: string; seen_snapshot: string }>(
        tx,
        sql`select day::text, seen_snapshot::text from attribution_day_credits
            where account_id = ${account.accountId} and model = 'linear' and day in ('2026-03-09', '2026-03-12') order by day`,
      ),
    );
    // Ann clicks ad B again on March 10: A a third, B two thirds.
    await loadFixture(env.db, account.accountId, {
      touchpoints: [click("t4", "ann@x.test", "B", "2026-03-10")],
    });
    assert.deepEqual(await account.credit("model=linear"), [
      ["meta/B", 0.6667, 1000, 866.67],
      ["meta/A", 0.3333, 500, 433.33],
    ]);
    const after = await env.db.admin(account.accountId, (tx) =>
      rows<{ day: string; seen_snapshot: string }>(
        tx,
        sql`select day::text, seen_snapshot::text from attribution_day_credits
            where account_id = ${account.accountId} and model = 'linear' and day in ('2026-03-09', '2026-03-12') order by day`,
      ),
    );
    // March 9 was still right: checked again (a newer snapshot), not computed again.
    assert.equal(after[0]?.day, "2026-03-09");
    assert.notEqual(after[0]?.seen_snapshot, before[0]?.seen_snapshot);
  });

  test("Markov reads the days' converting paths stored, whatever its order; a new path to null is read", async () => {
    const account = await worksOn();
    // Ann's one path A → B: removing either loses her conversion, half each.
    const halves = [
      ["meta/A", 0.5, 750, 650],
      ["meta/B", 0.5, 750, 650],
    ];
    assert.deepEqual(await account.credit("model=markov"), halves);
    assert.deepEqual(
      await account.plant("ad", "markov_paths", {
        paths: [[["meta/B"], 1]],
        touched: [1, 150000, 130000],
        untouched: [0, 0, 0],
        all: [1, 150000, 130000],
      }),
      [{ day: "2026-03-12" }],
    );
    assert.deepEqual(await account.credit("model=markov&order=2"), [
      ["meta/B", 1, 1500, 1300],
      ["meta/A", 0, 0, 0],
    ]);
    // Dan clicks A on March 20 and buys nothing: a path to null, read at each request. His touch
    // comes after Ann's sale, so her stored day holds: B alone converts, and removing B loses every
    // conversion (effect 1), removing A none (effect 0).
    await loadFixture(env.db, account.accountId, {
      touchpoints: [click("d1", "dan@x.test", "A", "2026-03-20")],
    });
    assert.deepEqual(await account.credit("model=markov&order=2"), [
      ["meta/B", 1, 1500, 1300],
      ["meta/A", 0, 0, 0],
    ]);
  });

  test("Markov's paths to null are stored by window, read back while they hold, and staled by a change before the window's end", async () => {
    const account = await worksOn();
    const halves = [
      ["meta/A", 0.5, 750, 650],
      ["meta/B", 0.5, 750, 650],
    ];
    assert.deepEqual(await account.credit("model=markov"), halves);
    // The worked example has no path to null: one is planted, three contacts who saw B alone.
    // Start → A (Ann) or B (the three); A → B; B converts once in four: P = 1/4. Without A, 3/16
    // (effect 1/4); without B, 0 (effect 1): shares 0.2 and 0.8.
    const plantedShares = [
      ["meta/B", 0.8, 1200, 1040],
      ["meta/A", 0.2, 300, 260],
    ];
    const plant = () =>
      env.db.admin(account.accountId, (tx) =>
        rows<{ window_start: string }>(
          tx,
          sql`update attribution_null_paths set paths = '{"keys": ["meta/B"], "paths": [[3, 0]]}'
              where account_id = ${account.accountId} and level = 'ad' and lookback_days = 30
              returning window_start::text`,
        ),
      );
    assert.deepEqual(await plant(), [{ window_start: "2026-03-01 00:00:00+00" }]);
    assert.deepEqual(await account.credit("model=markov"), plantedShares);
    // Whatever the order, the paths are the same: order 2 reads the planted ones rather than
    // reading and storing the window's own (none).
    await account.credit("model=markov&order=2");
    assert.deepEqual(
      await env.db.admin(account.accountId, (tx) =>
        rows(tx, sql`select paths from attribution_null_paths where account_id = ${account.accountId}`),
      ),
      [{ paths: { keys: ["meta/B"], paths: [[3, 0]] } }],
    );
    // Dan clicks A after the window's end: nothing the window's paths were read from.
    await loadFixture(env.db, account.accountId, {
      touchpoints: [click("d0", "dan@x.test", "A", "2026-04-02")],
    });
    assert.deepEqual(await account.credit("model=markov"), plantedShares);
    // Eve clicks A, then B, in March and buys nothing: the paths are read again. Start → A (2);
    // A → B (2); B converts once in two: P = 1/2, and removing either loses it all: halves.
    await loadFixture(env.db, account.accountId, {
      touchpoints: [
        click("e1", "eve@x.test", "A", "2026-03-20"),
        click("e2", "eve@x.test", "B", "2026-03-21"),
      ],
    });
    assert.deepEqual(await account.credit("model=markov"), halves);
    assert.deepEqual(
      await env.db.admin(account.accountId, (tx) =>
        rows(tx, sql`select paths from attribution_null_paths where account_id = ${account.accountId}`),
      ),
      [{ paths: { keys: ["meta/A", "meta/B"], paths: [[1, 0, 1]] } }],
    );
    // Read back as stored: the same path (read as B → A, it would give A a third and B two).
    assert.deepEqual(await account.credit("model=markov"), halves);
  });

  test("an import computes again the stored days it staled, before any request", async () => {
    const account = await worksOn();
    await account.credit("model=linear");
    await account.credit("model=markov&level=campaign");
    const dir = await mkdtemp(join(tmpdir(), "ascribe-days-"));
    const file = join(dir, "touchpoints.jsonl");
    await writeFile(file, JSON.stringify(click("t4", "ann@x.test", "B", "2026-03-10")));
    await runImport(env.db, testSecrets, { kind: "touchpoints", account: account.accountId, file });
    await rm(dir, { recursive: true });
    const stored = () =>
      env.db.admin(account.accountId, (tx) =>
        rows<{ model: string; credit: { keys: Record<string, number[]> } | { paths: unknown[] } }>(
          tx,
          sql`select model, credit from attribution_day_credits
              where account_id = ${account.accountId} and day = '2026-03-12' order by model`,
        ),
      );
    // Ann's journey is now A, B, B: linear gives A a third and B two thirds of 1500 (net 1300).
    const third = 1 / 3;
    assert.deepEqual(await stored(), [
      {
        model: "linear",
        credit: {
          keys: {
            "meta/A": [third, 1500 * third, 1300 * third],
            "meta/B": [2 * third, 1000, 1300 * third * 2],
          },
          untouched: [0, 0, 0],
          all: [1, 150000, 130000],
          paths: 1,
        },
      },
      {
        model: "markov_paths",
        credit: {
          paths: [[["meta/C1", "meta/C1", "meta/C1"], 1]],
          touched: [1, 150000, 130000],
          untouched: [0, 0, 0],
          all: [1, 150000, 130000],
        },
      },
    ]);
    // And the stored days are what the next requests read.
    await account.plant("ad", "linear");
    assert.deepEqual(await account.credit("model=linear"), planted);
  });

  test("a refund of the sale stales the sale's day: net revenue on the same shares", async () => {
    const account = await worksOn();
    await account.credit("model=linear");
    await account.plant("ad", "linear");
    await loadFixture(env.db, account.accountId, {
      events: [
        {
          id: "r2",
          event_type: "payment",
          event_datetime: at("2026-03-28"),
          contact_email: "ann@x.test",
          amount: 100,
          payment_status: "refunded",
          product_key: "coaching",
        },
      ],
    });
    // 1300 − 100 = 1200 net, half each.
    assert.deepEqual(await account.credit("model=linear"), [
      ["meta/A", 0.5, 750, 600],
      ["meta/B", 0.5, 750, 600],
    ]);
  });

  test("an ad moved to another campaign stales the campaign level", async () => {
    const account = await worksOn();
    assert.deepEqual(await account.credit("model=linear&level=campaign"), [["meta/C1", 1, 1500, 1300]]);
    await loadFixture(env.db, account.accountId, {
      spend: [ad("B", "2026-03-05", 50, { campaign_id: "C2" })],
    });
    assert.deepEqual(await account.credit("model=linear&level=campaign"), [
      ["meta/C1", 0.5, 750, 650],
      ["meta/C2", 0.5, 750, 650],
    ]);
  });

  test("a new timezone computes the days again in it", async () => {
    const account = await worksOn();
    await account.credit("model=linear");
    await account.plant("ad", "linear");
    await env.db.admin(account.accountId, (tx) =>
      rows(
        tx,
        sql`update accounts set timezone = 'Europe/Paris' where id = ${account.accountId} returning id`,
      ),
    );
    const r = await account.credit("model=linear");
    assert.deepEqual(r, [
      ["meta/A", 0.5, 750, 650],
      ["meta/B", 0.5, 750, 650],
    ]);
    const zones = await env.db.admin(account.accountId, (tx) =>
      rows<{ timezone: string }>(
        tx,
        sql`select distinct timezone from attribution_day_credits where account_id = ${account.accountId}`,
      ),
    );
    assert.deepEqual(zones, [{ timezone: "Europe/Paris" }]);
  });

  test("one writing transaction in 1,024 drops its accounts' changes older than a day", async () => {
    const account = await worksOn();
    await env.db.admin(account.accountId, (tx) =>
      rows(
        tx,
        sql`insert into journey_changes (account_id, xid, from_at, noted_at)
            values (${account.accountId}, '3'::xid8, '2026-03-01', now() - interval '25 hours'),
                   (${account.accountId}, '4'::xid8, '2026-03-01', now() - interval '23 hours')
            returning xid`,
      ),
    );
    const changes = () =>
      env.db.admin(account.accountId, (tx) =>
        rows<{ xid: string }>(
          tx,
          sql`select xid::text from journey_changes where account_id = ${account.accountId} and xid < '5'::xid8 order by xid`,
        ),
      );
    const touchpoints = importKinds.touchpoints as ImportKind<unknown>;
    const record = touchpoints.schema.parse(click("t4", "ann@x.test", "B", "2026-03-10"));
    // Each transaction takes its id first, and writes only when it is the one in 1,024.
    let pruning = false;
    for (let tries = 0; !pruning && tries < 5_000; tries++) {
      pruning = await env.db.tenant(account.accountId, async (tx) => {
        const [own] = await rows<{ xid: string }>(tx, sql`select pg_current_xact_id()::text as xid`);
        if (BigInt(own?.xid ?? "1") % 1024n !== 0n) return false;
        await touchpoints.write(tx, account.accountId, [record], { secrets: testSecrets });
        return true;
      });
    }
    assert.ok(pruning);
    assert.deepEqual(await changes(), [{ xid: "4" }]);
  });

  test("a change whose transaction was still open when the days were computed stales them once it commits", {
    skip: backend !== "postgres" && "two connections at once: PostgreSQL only",
  }, async () => {
    const account = await worksOn();
    const touchpoints = importKinds.touchpoints as ImportKind<unknown>;
    const record = touchpoints.schema.parse(click("t4", "ann@x.test", "B", "2026-03-10"));
    let written: () => void = () => {};
    const wrote = new Promise<void>((resolve) => {
      written = resolve;
    });
    let commit: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const writer = env.db.tenant(account.accountId, async (tx) => {
      await touchpoints.write(tx, account.accountId, [record], { secrets: testSecrets });
      written();
      await held;
    });
    await wrote;
    // Computed while the touch is written but not committed: without it.
    assert.deepEqual(await account.credit("model=linear"), [
      ["meta/A", 0.5, 750, 650],
      ["meta/B", 0.5, 750, 650],
    ]);
    commit();
    await writer;
    assert.deepEqual(await account.credit("model=linear"), [
      ["meta/B", 0.6667, 1000, 866.67],
      ["meta/A", 0.3333, 500, 433.33],
    ]);
  });
});
