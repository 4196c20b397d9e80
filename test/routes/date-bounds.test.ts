import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { crmEventSchema } from "../../src/ingest/crm-event.ts";
import { spendRowSchema } from "../../src/ingest/spend-row.ts";
import { routes } from "../../src/routes/index.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";

const t = useTestApp();

/** The registry's GET routes that take a `from`/`to` window. */
const windowed = routes.filter((r) => {
  if (!r.methods.includes("GET")) return false;
  const shape = (r.input as unknown as { shape?: Record<string, unknown> }).shape;
  return shape !== undefined && "from" in shape && "to" in shape;
});

describe("dates a client sends: out of the accepted years is a 400 naming the parameter", () => {
  // Accounts at both ends of the clock: the window's bounds are computed in the account's timezone.
  const keys: Record<string, string> = {};
  before(async () => {
    for (const timezone of ["UTC", "Pacific/Kiritimati", "Etc/GMT+12"]) {
      keys[timezone] = await (await seedAccount(t.db, { timezone })).key(["*"]);
    }
  });

  test("the windowed routes are found (the check below runs on each)", () => {
    assert.ok(windowed.length >= 15, `found ${windowed.length}`);
    assert.ok(windowed.some((r) => r.path === "/events"));
  });

  const refused: [string, string][] = [
    ["from=0000-01-01", "from: must be between 1900-01-01 and 9999-12-30"],
    ["from=0050-06-15", "from: must be between 1900-01-01 and 9999-12-30"],
    ["to=0099-12-31", "to: must be between 1900-01-01 and 9999-12-30"],
    [
      "from=0001-01-01&to=0001-01-02",
      "from: must be between 1900-01-01 and 9999-12-30; to: must be between 1900-01-01 and 9999-12-30",
    ],
    ["from=1899-12-31", "from: must be between 1900-01-01 and 9999-12-30"],
    ["to=9999-12-31", "to: must be between 1900-01-01 and 9999-12-30"],
    ["from=2026-02-30", "from: is not a calendar date"],
    ["to=2025-02-29", "to: is not a calendar date"],
    ["from=10000-01-01", "from: must be a date YYYY-MM-DD"],
    ["from=%2B10000-01-01", "from: must be a date YYYY-MM-DD"],
  ];
  for (const [query, message] of refused) {
    test(`${query} → 400 "${message}" on every windowed route`, async () => {
      for (const route of windowed) {
        const res = await t.app.inject({
          url: `/api/v1${route.path}?${query}`,
          headers: bearer(keys.UTC ?? ""),
        });
        assert.equal(res.statusCode, 400, `${route.path}: ${res.body}`);
        assert.deepEqual(res.json(), { error: message }, route.path);
      }
    });
  }

  test("the first and last accepted days answer 200 in every timezone, windows of one day and defaulted", async () => {
    const accepted = [
      "from=1900-01-01&to=1900-01-01",
      "to=1900-01-01",
      "from=9999-12-30",
      "from=9999-12-30&to=9999-12-30",
      "from=2024-02-29&to=2024-03-01",
    ];
    for (const [timezone, key] of Object.entries(keys)) {
      for (const route of windowed) {
        const extra = route.path === "/journeys/contact" ? "&email=someone@example.com" : "";
        for (const query of accepted) {
          const res = await t.app.inject({
            url: `/api/v1${route.path}?${query}${extra}`,
            headers: bearer(key),
          });
          assert.equal(res.statusCode, 200, `${timezone} ${route.path}?${query}: ${res.body}`);
        }
      }
    }
  });

  test("/events cursor: an instant before 1900 or a row cursor holding one → 400 naming cursor", async () => {
    const outOfRange = "cursor: must be between 1900-01-01T00:00:00Z and 9999-12-31T23:59:59Z";
    const malformed = "cursor: must be a row's cursor or an event_datetime (ISO 8601)";
    const refused: [string, string][] = [
      ["0000-01-01T00:00:00Z", outOfRange],
      ["0050-01-01T00:00:00Z", outOfRange],
      ["1900-01-01T00:00:00%2B01:00", outOfRange],
      [Buffer.from("0000-01-01T00:00:00Z|evt-1").toString("base64url"), outOfRange],
      [Buffer.from("0099-12-31T23:59:59Z|evt-1").toString("base64url"), outOfRange],
      ["2026-02-30T00:00:00Z", malformed],
    ];
    for (const [cursor, message] of refused) {
      const res = await t.app.inject({
        url: `/api/v1/events?cursor=${cursor}`,
        headers: bearer(keys.UTC ?? ""),
      });
      assert.equal(res.statusCode, 400, `${cursor}: ${res.body}`);
      assert.deepEqual(res.json(), { error: message });
    }
    for (const cursor of [
      "1900-01-01T00:00:00Z",
      "9999-12-31T23:59:59Z",
      Buffer.from("1900-01-01T00:00:00Z|evt-1").toString("base64url"),
    ]) {
      const res = await t.app.inject({
        url: `/api/v1/events?cursor=${cursor}`,
        headers: bearer(keys.UTC ?? ""),
      });
      assert.equal(res.statusCode, 200, `${cursor}: ${res.body}`);
    }
  });

  test("ingested dates: an event, a booking day and a spend day outside the years are refused", () => {
    const event = { id: "e1", event_type: "lead", event_datetime: "2026-01-05T10:00:00Z" };
    assert.equal(crmEventSchema.safeParse(event).success, true);
    for (const at of ["0000-01-01T00:00:00Z", "0001-01-01T01:00:00+05:00", "1899-12-31T23:59:59Z"]) {
      const parsed = crmEventSchema.safeParse({ ...event, event_datetime: at });
      assert.equal(parsed.success, false, at);
      assert.deepEqual(
        parsed.error?.issues.map((i) => i.path.join(".")),
        ["event_datetime"],
      );
    }
    assert.equal(crmEventSchema.safeParse({ ...event, booking_date: "0000-01-01" }).success, false);
    // A value that is no date at all gets its one message, not the range's on top.
    const junk = crmEventSchema.safeParse({ ...event, event_datetime: "nope" });
    assert.deepEqual(
      junk.error?.issues.map((i) => i.message),
      ["must be an ISO 8601 date-time with a time zone"],
    );
    const spend = { platform: "meta", ad_id: "1", ad_name: "A", date: "2026-01-05", total_spend: 1 };
    assert.equal(spendRowSchema.safeParse(spend).success, true);
    assert.equal(spendRowSchema.safeParse({ ...spend, date: "0099-01-01" }).success, false);
  });
});
