import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { seedAccount, useTestApp } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-20T12:00:00Z");

const env = useTestApp({ clock: () => now });

const day = (n: number) => `2026-03-${String(n).padStart(2, "0")}`;
const event = fc.record({
  event_type: fc.constantFrom("lead", "application", "booking", "no_show", "sale", "payment"),
  day: fc.integer({ min: 1, max: 31 }),
  hour: fc.integer({ min: 0, max: 23 }),
  contact: fc.integer({ min: 1, max: 6 }),
  amount: fc.integer({ min: 1, max: 200_000 }).map((cents) => cents / 100),
  payment_status: fc.constantFrom("paid", "refunded", "disputed", undefined),
  product_key: fc.constantFrom("coaching", "ebook", undefined),
  utm_source: fc.constantFrom("facebook", "google", undefined),
  rep: fc.constantFrom("Yan", "Zoe", undefined),
  booking_day: fc.integer({ min: 1, max: 31 }),
  is_baseline: fc.boolean(),
});
const spendRow = fc.record({
  day: fc.integer({ min: 1, max: 31 }),
  ad: fc.constantFrom("A1", "A2"),
  spend: fc.integer({ min: 0, max: 50_000 }),
});

const cents = (n: number) => Math.round(n * 100);
function totals(rows: Record<string, number>[], fields: string[]): Record<string, number> {
  return Object.fromEntries(fields.map((f) => [f, cents(rows.reduce((sum, r) => sum + (r[f] ?? 0), 0))]));
}

test("Σ daily rows = the KPI totals, and each breakdown's rows add up to them", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(event, { maxLength: 40 }),
      fc.array(spendRow, { maxLength: 8 }),
      async (events, spend) => {
        const account = await seedAccount(env.db);
        await loadFixture(env.db, account.accountId, {
          spend: spend.map((s) => ({
            platform: "meta",
            ad_id: s.ad,
            ad_name: `Ad ${s.ad}`,
            date: day(s.day),
            total_spend: s.spend / 100,
          })),
          events: events.map((e, i) => ({
            id: `e${i}`,
            event_type: e.event_type,
            event_datetime: `${day(e.day)}T${String(e.hour).padStart(2, "0")}:00:00Z`,
            contact_email: `c${e.contact}@x.test`,
            amount: e.amount,
            payment_status: e.event_type === "payment" ? e.payment_status : undefined,
            product_key: e.product_key,
            utm_source: e.utm_source,
            assigned_user_name: e.rep,
            booking_date: e.event_type === "booking" ? day(e.booking_day) : undefined,
            is_baseline: e.is_baseline,
          })),
        });
        const key = await account.key(["read:dashboard"]);
        const read = async (url: string) => (await env.get(key, url)).body.data;
        const window = "from=2026-03-01&to=2026-03-31";
        const kpis = await read(`/dashboard/kpis?${window}`);
        const asRow = { ...kpis, sales: kpis.total_sales };

        const dailyFields = [
          "leads",
          "applications",
          "bookings",
          "meetings",
          "no_shows",
          "sales",
          "revenue",
          "spend",
        ];
        const daily = await read(`/dashboard/daily?${window}`);
        assert.equal(daily.length, 31);
        assert.deepEqual(totals(daily, dailyFields), totals([asRow], dailyFields));

        const breakdownFields = ["leads", "applications", "bookings", "no_shows", "sales", "revenue"];
        for (const dim of ["source", "campaign", "product", "rep"]) {
          const rows = await read(`/dashboard/breakdowns?${window}&dim=${dim}`);
          assert.deepEqual(totals(rows, breakdownFields), totals([asRow], breakdownFields), dim);
        }
      },
    ),
    { numRuns: 12 },
  );
});
