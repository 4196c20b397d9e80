import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { updateAccountSettings } from "../../src/admin/accounts.ts";
import { rows } from "../../src/db/client.ts";
import { dashboardRoutes } from "../../src/routes/dashboard.ts";
import { financeRoutes } from "../../src/routes/finance.ts";
import { backend, seedAccount, useTestApp } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now, routes: [...dashboardRoutes, ...financeRoutes] });

/**
 * The rollups are kept by day in the account's timezone: a new timezone recomputes them
 * (updateAccountSettings), or a report would cut its new days out of the old ones.
 */
describe(`a new timezone moves the rollups' days (${backend})`, () => {
  // 23:30 UTC on the last day of February: March 1 in Paris (UTC+1).
  const late = {
    events: [
      { id: "l1", event_type: "lead", event_datetime: "2026-02-28T23:30:00Z", contact_email: "a@x.test" },
      {
        id: "s1",
        event_type: "sale",
        event_datetime: "2026-02-28T23:30:00Z",
        contact_email: "a@x.test",
        amount: 800,
      },
    ],
  };

  test("the dashboard's day and the P&L's month follow the new timezone", async () => {
    const account = await seedAccount(env.db, { timezone: "UTC" });
    await loadFixture(env.db, account.accountId, late);
    const key = await account.key(["read:dashboard", "read:finance"]);
    const leadsOnMarch1 = async () =>
      (await env.get(key, "/dashboard/kpis?from=2026-03-01&to=2026-03-01")).body.data.leads;
    const revenueByMonth = async () =>
      (await env.get(key, "/finance/pnl?from=2026-02-01&to=2026-03-31")).body.data.by_month.map(
        (m: { month: string; revenue: number }) => [m.month, m.revenue],
      );
    assert.equal(await leadsOnMarch1(), 0);
    assert.deepEqual(await revenueByMonth(), [
      ["2026-02", 800],
      ["2026-03", 0],
    ]);

    await updateAccountSettings(env.db, {
      account: account.accountId,
      name: "Moved",
      timezone: "Europe/Paris",
    });
    assert.equal(await leadsOnMarch1(), 1);
    assert.deepEqual(await revenueByMonth(), [
      ["2026-02", 0],
      ["2026-03", 800],
    ]);
  });

  test("a change of name alone leaves the rollups as they are", async () => {
    const account = await seedAccount(env.db, { timezone: "UTC" });
    await loadFixture(env.db, account.accountId, late);
    const key = await account.key(["read:dashboard"]);
    await env.get(key, "/dashboard/kpis?from=2026-02-28&to=2026-02-28");
    const stamp = () =>
      env.db.admin(account.accountId, (tx) =>
        rows<{ rows: string }>(
          tx,
          sql`select string_agg(xmin::text || ':' || dim || ':' || day || ':' || key, ',' order by dim, day, key) as rows
              from report_rollup_daily where account_id = ${account.accountId}`,
        ),
      );
    const before = await stamp();
    await updateAccountSettings(env.db, { account: account.accountId, name: "Renamed", timezone: "UTC" });
    assert.deepEqual(await stamp(), before);
  });
});
