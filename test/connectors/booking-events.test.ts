import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { localDateTime } from "../../src/connectors/booking-action.ts";
import { calcomAction } from "../../src/connectors/calcom-events.ts";
import { calendlyAction, calendlyDeliveryId } from "../../src/connectors/calendly-events.ts";
import { danCreated } from "./calcom-fixtures.ts";

/* The mappings alone (no database): shapes the hook tests do not send. */

describe("booking_date / booking_time in the account's timezone", () => {
  test("around the changes of time and the date line", () => {
    const cases: [string, string, string, string][] = [
      // Europe/Paris moves to UTC+2 at 01:00 UTC on 2026-03-29.
      ["2026-03-29T00:59:00Z", "Europe/Paris", "2026-03-29", "01:59"],
      ["2026-03-29T01:00:00Z", "Europe/Paris", "2026-03-29", "03:00"],
      // New York is UTC-5 before 2026-03-08 07:00 UTC, UTC-4 after.
      ["2026-03-08T06:30:00Z", "America/New_York", "2026-03-08", "01:30"],
      ["2026-03-08T07:30:00Z", "America/New_York", "2026-03-08", "03:30"],
      ["2026-03-31T23:00:00Z", "Pacific/Kiritimati", "2026-04-01", "13:00"],
      ["2026-03-31T23:00:00Z", "UTC", "2026-03-31", "23:00"],
      // Midnight is 00, not 24.
      ["2026-03-31T22:00:00Z", "Europe/Paris", "2026-04-01", "00:00"],
    ];
    for (const [at, tz, date, time] of cases)
      assert.deepEqual(localDateTime(at, tz), { date, time }, `${at} ${tz}`);
  });
});

describe("Calendly", () => {
  // The InviteeNoShow resource (uri, invitee, created_at) instead of the invitee with its no_show:
  // https://developer.calendly.com/api-docs/calendly-api/scheduled-events/create-invitee-no-show
  const resource = {
    event: "invitee_no_show.created",
    created_at: "2026-03-16T11:05:01.000000Z",
    payload: {
      uri: "https://api.calendly.com/invitee_no_shows/NOSHOW0001",
      invitee: "https://api.calendly.com/scheduled_events/EV0001/invitees/INV0001",
      created_at: "2026-03-16T11:05:00.000000Z",
    },
  };

  test("a no-show resource without the invitee's details still records the no-show, by its invitee", () => {
    const action = calendlyAction(resource, "UTC");
    assert.equal(action.kind, "changes");
    if (action.kind !== "changes") return;
    assert.deepEqual(
      action.events.map((e) => [e.id, e.event_type, e.event_datetime, e.contact_email]),
      [["calendly:INV0001:no_show", "no_show", "2026-03-16T11:05:00.000Z", null]],
    );
    const undo = calendlyAction({ ...resource, event: "invitee_no_show.deleted" }, "UTC");
    assert.deepEqual(undo, { kind: "changes", events: [], remove: ["calendly:INV0001:no_show"] });
    assert.equal(
      calendlyDeliveryId(resource),
      "invitee_no_show.created:https://api.calendly.com/invitee_no_shows/NOSHOW0001:2026-03-16T11:05:01.000000Z",
    );
  });

  test("a payload naming no invitee is acknowledged, not stored", () => {
    assert.deepEqual(calendlyAction({ ...resource, payload: {} }, "UTC"), {
      kind: "ignored",
      reason: "no invitee uri or no created_at",
    });
  });
});

describe("Cal.com", () => {
  test("the booker is the first attendee; guests are not bookings", () => {
    const withGuest = structuredClone(danCreated);
    withGuest.payload.attendees.push({
      email: "guest@example.com",
      name: "Guest",
      timeZone: "UTC",
      language: { locale: "en" },
    });
    const action = calcomAction(withGuest, "UTC");
    assert.equal(action.kind, "changes");
    if (action.kind !== "changes") return;
    assert.deepEqual(
      action.events.map((e) => [e.id, e.contact_email, e.booking_date, e.booking_time, e.utm_content]),
      [["calcom:dAnBkg7x2Q1vY9pLmN3s:booking", "Dan.Prospect@Example.com", "2026-03-30", "07:30", "video-a"]],
    );
  });

  test("a no-show update for several attendees marks and unmarks each", () => {
    const action = calcomAction(
      {
        triggerEvent: "BOOKING_NO_SHOW_UPDATED",
        createdAt: "2026-03-30T08:10:00.000Z",
        payload: {
          message: "no_show_updated",
          bookingUid: "uid1",
          bookingId: 1,
          attendees: [
            { email: "A@example.com", noShow: true },
            { email: "b@example.com", noShow: false },
          ],
        },
      },
      "UTC",
    );
    assert.equal(action.kind, "changes");
    if (action.kind !== "changes") return;
    assert.deepEqual(
      action.events.map((e) => e.id),
      ["calcom:uid1:no_show:a@example.com"],
    );
    assert.deepEqual(action.remove, ["calcom:uid1:no_show:b@example.com"]);
  });
});
