import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { monthStart } from "../../src/reports/window.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

// 23:30 UTC on 31 January is already 1 February in Paris (UTC+1).
const now = new Date("2026-01-31T23:30:00Z");

const env = useTestApp({ clock: () => now });

const send = env.send;

describe("ICP criteria", () => {
  test("{} until set; PUT replaces the whole object; POST does the same", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:icp", "write:icp"]);
    assert.deepEqual((await send("GET", "/icp/criteria", key)).json(), { data: {} });
    const put = await send("PUT", "/icp", key, { icp: { industries: ["coaching"], min_revenue: 100000 } });
    assert.equal(put.statusCode, 200);
    assert.deepEqual(put.json(), { data: { success: true } });
    assert.deepEqual((await send("GET", "/icp/criteria", key)).json(), {
      data: { industries: ["coaching"], min_revenue: 100000 },
    });
    await send("POST", "/icp", key, { icp: { countries: ["FR"] } });
    assert.deepEqual((await send("GET", "/icp/criteria", key)).json(), { data: { countries: ["FR"] } });
  });

  test("a body without an icp object → 400 missing icp object, and nothing changes", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:icp", "write:icp"]);
    await send("PUT", "/icp", key, { icp: { keep: "me" } });
    for (const body of [{}, { icp: null }, { icp: "text" }, { icp: [1, 2] }, { criteria: { a: 1 } }]) {
      const res = await send("PUT", "/icp", key, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(res.json(), { error: "missing icp object" });
    }
    const empty = await env.app.inject({ method: "PUT", url: "/api/v1/icp", headers: bearer(key) });
    assert.deepEqual(empty.json(), { error: "missing icp object" });
    assert.deepEqual((await send("GET", "/icp/criteria", key)).json(), { data: { keep: "me" } });
  });

  test("secret-looking fields inside the criteria are never returned", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:icp", "write:icp"]);
    await send("PUT", "/icp", key, {
      icp: {
        industries: ["saas"],
        scoring: { model: "gpt-4o", Api_Key: "k", notes: "claude-3-5-sonnet-20241022" },
      },
    });
    assert.deepEqual((await send("GET", "/icp/criteria", key)).json(), {
      data: { industries: ["saas"], scoring: { notes: "Ascribe" } },
    });
  });
});

describe("KPI goals", () => {
  const goalsOf = (accountId: string) =>
    env.db.admin(accountId, (tx) =>
      rows<{ period: string; metric_key: string; target_value: string }>(
        tx,
        sql`select to_char(period, 'YYYY-MM-DD') as period, metric_key, target_value::text as target_value
            from kpi_goals where account_id = ${accountId} order by period, metric_key`,
      ),
    );

  test("monthStart follows the account's timezone", () => {
    assert.equal(monthStart(now, "Europe/Paris"), "2026-02-01");
    assert.equal(monthStart(now, "UTC"), "2026-01-01");
    assert.equal(monthStart(now, "America/New_York"), "2026-01-01");
  });

  test("saved on the current month of the account's timezone; a second PUT replaces the month's goals", async () => {
    const account = await seedAccount(env.db, { timezone: "Europe/Paris" });
    const key = await account.key(["write:goals"]);
    const first = await send("PUT", "/goals", key, {
      goals: [
        { metric_key: "leads", target_value: 120 },
        { metric_key: "revenue", target_value: 45000.5 },
      ],
    });
    assert.deepEqual(first.json(), { data: { success: true } });
    assert.deepEqual(await goalsOf(account.accountId), [
      { period: "2026-02-01", metric_key: "leads", target_value: "120" },
      { period: "2026-02-01", metric_key: "revenue", target_value: "45000.5" },
    ]);
    await send("POST", "/goals", key, { goals: [{ metric_key: "sales", target_value: 12 }] });
    assert.deepEqual(await goalsOf(account.accountId), [
      { period: "2026-02-01", metric_key: "sales", target_value: "12" },
    ]);
  });

  test("invalid goals → 400 naming the problem, nothing saved", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["write:goals"]);
    await send("PUT", "/goals", key, { goals: [{ metric_key: "leads", target_value: 1 }] });
    const cases: [unknown, string][] = [
      [{}, "missing goals object"],
      [{ goals: null }, "missing goals object"],
      [{ goals: "x" }, "missing goals object"],
      [
        { goals: [{ metric_key: "leads", target_value: "ten" }] },
        "goals[0].target_value: Invalid input: expected number, received string",
      ],
      [
        { goals: [{ target_value: 3 }] },
        "goals[0].metric_key: Invalid input: expected string, received undefined",
      ],
      [
        {
          goals: [
            { metric_key: "a", target_value: 1 },
            { metric_key: "a", target_value: 2 },
          ],
        },
        "goals[1].metric_key: duplicate a",
      ],
    ];
    for (const [body, error] of cases) {
      const res = await send("PUT", "/goals", key, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(res.json(), { error });
    }
    assert.deepEqual(await goalsOf(account.accountId), [
      { period: "2026-01-01", metric_key: "leads", target_value: "1" },
    ]);
  });
});
