import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { limitParam, offsetParam, reportWindow, startOfDay, windowQuery } from "../../src/reports/window.ts";

const paris = { timezone: "Europe/Paris" };

test("the default window is the 30 days ending today in the account's timezone", () => {
  // 23:30 UTC on 31 January is already 1 February in Paris.
  const w = reportWindow({}, paris, new Date("2026-01-31T23:30:00Z"));
  assert.equal(w.from, "2026-01-03");
  assert.equal(w.to, "2026-02-01");
  assert.equal(w.days, 30);
  assert.equal(w.start, "2026-01-02T23:00:00.000Z");
  assert.equal(w.end, "2026-02-01T23:00:00.000Z");
});

test("only from: up to today; only to: the 30 days ending then; a future from is its own last day", () => {
  const now = new Date("2026-03-10T12:00:00Z");
  assert.deepEqual(
    [reportWindow({ from: "2026-03-01" }, paris, now)].map((w) => [w.from, w.to, w.days]),
    [["2026-03-01", "2026-03-10", 10]],
  );
  assert.deepEqual(
    [reportWindow({ to: "2026-02-28" }, paris, now)].map((w) => [w.from, w.to, w.days]),
    [["2026-01-30", "2026-02-28", 30]],
  );
  assert.deepEqual(
    [reportWindow({ from: "2026-04-01" }, paris, now)].map((w) => [w.from, w.to, w.days]),
    [["2026-04-01", "2026-04-01", 1]],
  );
});

test("day starts follow daylight saving time", () => {
  assert.equal(startOfDay("2026-03-29", "Europe/Paris").toISOString(), "2026-03-28T23:00:00.000Z");
  assert.equal(startOfDay("2026-03-30", "Europe/Paris").toISOString(), "2026-03-29T22:00:00.000Z");
  assert.equal(startOfDay("2026-11-01", "America/New_York").toISOString(), "2026-11-01T04:00:00.000Z");
  assert.equal(startOfDay("2026-11-02", "America/New_York").toISOString(), "2026-11-02T05:00:00.000Z");
  assert.equal(startOfDay("2026-06-15", "UTC").toISOString(), "2026-06-15T00:00:00.000Z");
  assert.equal(startOfDay("2026-06-15", "Asia/Kolkata").toISOString(), "2026-06-14T18:30:00.000Z");
});

test("malformed dates and from after to are refused with a message naming the parameter", () => {
  const schema = windowQuery({});
  const message = (q: unknown) => {
    const r = schema.safeParse(q);
    return r.success ? null : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  };
  assert.equal(message({ from: "2026-1-01" }), "from: must be a date YYYY-MM-DD");
  assert.equal(message({ to: "2026-02-30" }), "to: is not a calendar date");
  assert.equal(message({ from: "2026-02-02", to: "2026-02-01" }), "from: must not be after to");
  assert.equal(message({ from: "2026-02-01", to: "2026-02-01" }), null);
});

test("limit is clamped to its maximum; below 1 or not an integer is refused; offset ≥ 0", () => {
  const schema = z.object({ limit: limitParam(50, 200), offset: offsetParam() });
  assert.deepEqual(schema.parse({}), { limit: 50, offset: 0 });
  assert.deepEqual(schema.parse({ limit: "500", offset: "20" }), { limit: 200, offset: 20 });
  assert.deepEqual(schema.parse({ limit: "1" }), { limit: 1, offset: 0 });
  for (const bad of [{ limit: "0" }, { limit: "-3" }, { limit: "2.5" }, { limit: "ten" }, { offset: "-1" }]) {
    assert.equal(schema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});
