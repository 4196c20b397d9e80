import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";
import { removeConnector, testConnector } from "../../src/admin/connectors.ts";
import { testSecrets, useTestApp } from "../helpers/harness.ts";
import {
  type BookingAccount,
  bookingAccount,
  events,
  post,
  stored,
  touchpoints,
} from "./booking-hook-helpers.ts";
import {
  danCreated,
  danMeetingEnded,
  danMeetingStarted,
  danNoShow,
  danNoShowUndone,
  eveCancelled,
  eveCreated,
  fayCreated,
  fayMeetingEnded,
  ping,
} from "./calcom-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });

/** Signed as Cal.com documents it, written out: `X-Cal-Signature-256: hex(HMAC-SHA256(secret, body))`. */
function deliver(a: BookingAccount, body: unknown, secret: string | null = a.secret) {
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  const signature = secret ? createHmac("sha256", secret).update(payload).digest("hex") : null;
  return post(env, "calcom", a.connectorId, payload, signature ? { "x-cal-signature-256": signature } : {});
}

async function ok(a: BookingAccount, body: unknown) {
  const r = await deliver(a, body);
  assert.equal(r.statusCode, 200, r.body);
  return r.json().data;
}

const all = [
  danCreated,
  eveCreated,
  eveCancelled,
  fayCreated,
  fayMeetingEnded,
  danMeetingEnded,
  danNoShow,
  danNoShowUndone,
  danMeetingStarted,
];

describe("POST /api/hooks/calcom/<connector id>", () => {
  test("bookings, cancellations and no-shows land as events, in the account's timezone, with their UTM", async () => {
    const a = await bookingAccount(env, "calcom", "Europe/Paris");
    assert.deepEqual(await ok(a, danCreated), {
      received: "BOOKING_CREATED:dAnBkg7x2Q1vY9pLmN3s:2026-03-20T10:00:00.000Z",
      type: "BOOKING_CREATED",
      outcome: "stored",
      removed: 0,
      inserted: 1,
      updated: 0,
      unchanged: 0,
    });
    for (const e of [eveCreated, eveCancelled, fayCreated, fayMeetingEnded, danNoShow])
      assert.equal((await ok(a, e)).outcome, "stored", e.triggerEvent);
    assert.deepEqual(await ok(a, danMeetingEnded), {
      received: "MEETING_ENDED:dAnBkg7x2Q1vY9pLmN3s:2026-03-30T08:05:00.000Z",
      type: "MEETING_ENDED",
      outcome: "ignored",
      reason: "no attendee marked as a no-show",
    });
    assert.deepEqual((await ok(a, danMeetingStarted)).reason, "trigger MEETING_STARTED is not used");
    assert.deepEqual((await ok(a, ping)).reason, "trigger PING is not used");

    const danUtm = { utm_source: "facebook", utm_campaign: "spring-ads" };
    const none = { utm_source: null, utm_campaign: null };
    const eve = {
      contact_email: "eve@example.com",
      booking_date: "2026-03-27",
      booking_time: "16:00",
      ...none,
    };
    const fay = {
      contact_email: "fay@example.com",
      booking_date: "2026-03-25",
      booking_time: "14:00",
      ...none,
    };
    assert.deepEqual(await events(env, a), [
      {
        id: "calcom:dAnBkg7x2Q1vY9pLmN3s:booking",
        event_type: "booking",
        event_datetime: "2026-03-20T10:00:00.000Z",
        contact_email: "dan.prospect@example.com",
        // 07:30 UTC on the 30th is 09:30 in Paris (UTC+2 since the 29th).
        booking_date: "2026-03-30",
        booking_time: "09:30",
        ...danUtm,
      },
      {
        // The no-show update names the attendee only: no meeting time, no metadata (and enrichment
        // inherits web visits' UTM only; Dan has none).
        id: "calcom:dAnBkg7x2Q1vY9pLmN3s:no_show:dan.prospect@example.com",
        event_type: "no_show",
        event_datetime: "2026-03-30T08:10:00.000Z",
        contact_email: "dan.prospect@example.com",
        booking_date: null,
        booking_time: null,
        ...none,
      },
      // Eve's meeting, on the 27th before the change to summer time: UTC+1.
      {
        id: "calcom:eVeBkg4k8R2wZ6tHcJ5u:booking",
        event_type: "booking",
        event_datetime: "2026-03-21T09:00:00.000Z",
        ...eve,
      },
      {
        id: "calcom:eVeBkg4k8R2wZ6tHcJ5u:cancel",
        event_type: "cancel",
        event_datetime: "2026-03-22T09:00:00.000Z",
        ...eve,
      },
      {
        id: "calcom:fAyBkg9m3T5xQ2vBnK7w:booking",
        event_type: "booking",
        event_datetime: "2026-03-18T09:00:00.000Z",
        ...fay,
      },
      {
        id: "calcom:fAyBkg9m3T5xQ2vBnK7w:no_show:fay@example.com",
        event_type: "no_show",
        event_datetime: "2026-03-25T13:35:00.000Z",
        ...fay,
      },
    ]);
    // Dan's metadata UTM reaches his booking's touchpoint.
    const conversions = await touchpoints(env, a);
    assert.deepEqual(
      conversions.filter((t) => t[0] === "booking"),
      [
        ["booking", "dan.prospect@example.com", "facebook", "spring-ads"],
        ["booking", "eve@example.com", null, null],
        ["booking", "fay@example.com", null, null],
      ],
    );

    // The host unmarks Dan: his no-show record and its touchpoint go.
    assert.equal((await ok(a, danNoShowUndone)).removed, 1);
    const types = (await events(env, a)).map((e) => `${e.contact_email} ${e.event_type}`);
    assert.deepEqual(types, [
      "dan.prospect@example.com booking",
      "eve@example.com booking",
      "eve@example.com cancel",
      "fay@example.com booking",
      "fay@example.com no_show",
    ]);
    assert.equal(await stored(env, a, "touchpoints"), 5);

    const status = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.deepEqual([status.ok, status.last_event_at, status.last_error], [true, now.toISOString(), null]);
  });

  test("another timezone gives another calendar day and time", async () => {
    const a = await bookingAccount(env, "calcom", "Asia/Tokyo");
    await ok(a, eveCreated);
    const [eve] = await events(env, a);
    // 15:00 UTC on the 27th is 00:00 on the 28th in Tokyo (UTC+9).
    assert.deepEqual([eve?.booking_date, eve?.booking_time], ["2026-03-28", "00:00"]);
  });

  test("a replay of any delivery changes nothing", async () => {
    const a = await bookingAccount(env, "calcom");
    for (const e of all) assert.equal((await deliver(a, e)).statusCode, 200);
    const before = { events: await events(env, a), touchpoints: await touchpoints(env, a) };
    // Cal.com retries with the same body, in any order.
    for (const e of [...all].reverse())
      assert.equal((await deliver(a, e)).json().data.outcome, "duplicate", e.triggerEvent);
    assert.deepEqual({ events: await events(env, a), touchpoints: await touchpoints(env, a) }, before);
    // Dan's no-show stays taken back: its replayed marking is a duplicate.
    assert.ok(
      !before.events.some((e) => e.id === "calcom:dAnBkg7x2Q1vY9pLmN3s:no_show:dan.prospect@example.com"),
    );
    assert.equal(await stored(env, a, "connector_deliveries"), all.length);
  });

  test("wrong secret, altered body, missing or malformed signature → 401, nothing stored", async () => {
    const a = await bookingAccount(env, "calcom");
    const body = JSON.stringify(danCreated);
    const signed = createHmac("sha256", a.secret).update(body).digest("hex");
    const refusals = [
      await deliver(a, body, "not-the-secret"),
      await post(env, "calcom", a.connectorId, body.replace("facebook", "facebookX"), {
        "x-cal-signature-256": signed,
      }),
      await deliver(a, body, null),
      await post(env, "calcom", a.connectorId, body, { "x-cal-signature-256": signed.slice(0, 40) }),
    ];
    assert.deepEqual(
      refusals.map((r) => [r.statusCode, r.json().error, r.json().reason]),
      [
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "missing"],
        [401, "invalid_signature", "malformed"],
      ],
    );
    for (const table of ["events", "touchpoints", "connector_deliveries"] as const)
      assert.equal(await stored(env, a, table), 0, table);
    const status = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.deepEqual(
      [status.ok, status.last_event_at, status.last_error],
      [false, null, "signature malformed"],
    );

    // Signed correctly but not a Cal.com envelope: the sender's mistake, 400, nothing stored.
    const bad = JSON.stringify({ hello: "world" });
    const r = await post(env, "calcom", a.connectorId, bad, {
      "x-cal-signature-256": createHmac("sha256", a.secret).update(bad).digest("hex"),
    });
    assert.deepEqual(
      [r.statusCode, r.json().error],
      [400, "body: a Cal.com webhook carries triggerEvent, createdAt and payload"],
    );
    assert.equal(await stored(env, a, "connector_deliveries"), 0);
    const after = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.equal(
      after.last_error,
      "Cal.com delivery: body: a Cal.com webhook carries triggerEvent, createdAt and payload",
    );
  });

  test("a delivery lands only in its connector's account; removed or other-kind ids are 404", async () => {
    const a = await bookingAccount(env, "calcom");
    const b = await bookingAccount(env, "calcom");
    assert.equal((await deliver(a, danCreated, b.secret)).statusCode, 401);
    assert.equal((await deliver(b, danCreated)).statusCode, 200);
    assert.equal(await stored(env, a, "events"), 0);
    assert.deepEqual(await events(env, a), []);
    assert.equal((await events(env, b)).length, 1);

    // A Calendly connector's id is no Cal.com connector.
    const calendly = await bookingAccount(env, "calendly");
    assert.equal((await deliver(calendly, danCreated)).statusCode, 404);
    await removeConnector(env.db, { account: a.accountId, id: a.connectorId });
    const removed = await deliver(a, eveCreated);
    assert.deepEqual([removed.statusCode, removed.json().error], [404, "not_found"]);
    assert.equal(await stored(env, a, "events"), 0);
  });
});
