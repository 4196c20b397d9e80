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
  annCreated,
  bobCanceled,
  bobCreated,
  caraCreated,
  caraNoShowCreated,
  caraNoShowDeleted,
  routingForm,
} from "./calendly-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");
const nowSeconds = Math.floor(now.getTime() / 1000);
const env = useTestApp({ clock: () => now });

/** Signed as Calendly documents it, written out: `t=<unix>,v1=hex(HMAC-SHA256(key, "<t>.<body>"))`. */
function deliver(a: BookingAccount, body: unknown, key: string | null = a.secret, t = nowSeconds) {
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  const v1 = key ? createHmac("sha256", key).update(`${t}.${payload}`).digest("hex") : null;
  return post(
    env,
    "calendly",
    a.connectorId,
    payload,
    v1 ? { "calendly-webhook-signature": `t=${t},v1=${v1}` } : {},
  );
}

async function ok(a: BookingAccount, body: unknown) {
  const r = await deliver(a, body);
  assert.equal(r.statusCode, 200, r.body);
  return r.json().data;
}

const all = [
  annCreated,
  bobCreated,
  bobCanceled,
  caraCreated,
  caraNoShowCreated,
  caraNoShowDeleted,
  routingForm,
];

describe("POST /api/hooks/calendly/<connector id>", () => {
  test("bookings, cancellations and no-shows land as events, in the account's timezone, with their UTM", async () => {
    const a = await bookingAccount(env, "calendly", "Europe/Paris");
    assert.deepEqual(await ok(a, annCreated), {
      received:
        "invitee.created:https://api.calendly.com/scheduled_events/EVANN00000000001/invitees/INVANN000000001:2026-03-10T09:00:01.000000Z",
      type: "invitee.created",
      outcome: "stored",
      removed: 0,
      inserted: 1,
      updated: 0,
      unchanged: 0,
    });
    for (const e of [bobCreated, bobCanceled, caraCreated, caraNoShowCreated])
      assert.equal((await ok(a, e)).outcome, "stored");
    assert.deepEqual(await ok(a, routingForm), {
      received:
        "routing_form_submission.created:https://api.calendly.com/routing_form_submissions/RFS0000000001:2026-03-20T10:00:00.000000Z",
      type: "routing_form_submission.created",
      outcome: "ignored",
      reason: "event routing_form_submission.created is not used",
    });

    const booking = {
      booking_date: "2026-03-30",
      booking_time: "09:30",
      utm_source: null,
      utm_campaign: null,
    };
    const bob = { contact_email: "bob@example.com", ...booking };
    const cara = {
      contact_email: "cara@example.com",
      booking_date: "2026-03-16",
      booking_time: "11:00",
      utm_source: null,
      utm_campaign: null,
    };
    assert.deepEqual(await events(env, a), [
      {
        id: "calendly:INVANN000000001:booking",
        event_type: "booking",
        event_datetime: "2026-03-10T09:00:00.000Z",
        contact_email: "ann.booker@example.com",
        // 22:30 UTC on March 31st is 00:30 on April 1st in Paris.
        booking_date: "2026-04-01",
        booking_time: "00:30",
        utm_source: "newsletter",
        utm_campaign: "spring-webinar",
      },
      {
        id: "calendly:INVBOB000000001:booking",
        event_type: "booking",
        event_datetime: "2026-03-12T15:00:00.000Z",
        ...bob,
      },
      {
        id: "calendly:INVBOB000000001:cancel",
        event_type: "cancel",
        event_datetime: "2026-03-14T08:00:00.000Z",
        ...bob,
      },
      {
        id: "calendly:INVCARA00000001:booking",
        event_type: "booking",
        event_datetime: "2026-03-11T10:00:00.000Z",
        ...cara,
      },
      {
        id: "calendly:INVCARA00000001:no_show",
        event_type: "no_show",
        event_datetime: "2026-03-16T11:05:00.000Z",
        ...cara,
      },
    ]);
    // Ann's tracking reaches her booking's touchpoint.
    assert.deepEqual(await touchpoints(env, a), [
      ["booking", "ann.booker@example.com", "newsletter", "spring-webinar"],
      ["booking", "bob@example.com", null, null],
      ["booking", "cara@example.com", null, null],
      ["cancel", "bob@example.com", null, null],
      ["no_show", "cara@example.com", null, null],
    ]);

    // The host takes Cara's no-show back: the record and its touchpoint go.
    assert.deepEqual((await ok(a, caraNoShowDeleted)).removed, 1);
    const ids = (await events(env, a)).map((e) => e.id);
    assert.ok(!ids.includes("calendly:INVCARA00000001:no_show"));
    assert.equal(ids.length, 4);
    assert.equal(await stored(env, a, "touchpoints"), 4);

    const status = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.deepEqual([status.ok, status.last_event_at, status.last_error], [true, now.toISOString(), null]);
  });

  test("another timezone gives another calendar day and time", async () => {
    const a = await bookingAccount(env, "calendly", "America/New_York");
    await ok(a, annCreated);
    const [ann] = await events(env, a);
    // 22:30 UTC is 18:30 in New York (UTC-4 since March 8).
    assert.deepEqual([ann?.booking_date, ann?.booking_time], ["2026-03-31", "18:30"]);
  });

  test("a replay of any delivery changes nothing", async () => {
    const a = await bookingAccount(env, "calendly");
    for (const e of all) assert.equal((await deliver(a, e)).statusCode, 200);
    const before = { events: await events(env, a), touchpoints: await touchpoints(env, a) };
    // Calendly retries with the same body (a later signature time), in any order.
    for (const e of [...all].reverse()) {
      const r = await deliver(a, e, a.secret, nowSeconds - 120);
      assert.equal(r.json().data.outcome, "duplicate", e.event);
    }
    assert.deepEqual({ events: await events(env, a), touchpoints: await touchpoints(env, a) }, before);
    // The no-show stays taken back: its replayed creation is a duplicate.
    assert.ok(!before.events.some((e) => e.event_type === "no_show"));
    assert.equal(await stored(env, a, "connector_deliveries"), all.length);
  });

  test("wrong key, altered body, stale or missing signature → 401, nothing stored", async () => {
    const a = await bookingAccount(env, "calendly");
    const body = JSON.stringify(annCreated);
    const t = nowSeconds;
    const signed = createHmac("sha256", a.secret).update(`${t}.${body}`).digest("hex");
    const refusals = [
      await deliver(a, body, "not-the-signing-key"),
      await post(env, "calendly", a.connectorId, body.replace("newsletter", "newsletterX"), {
        "calendly-webhook-signature": `t=${t},v1=${signed}`,
      }),
      await deliver(a, body, a.secret, nowSeconds - 301),
      await deliver(a, body, null),
      await post(env, "calendly", a.connectorId, body, { "calendly-webhook-signature": `v1=${signed}` }),
    ];
    assert.deepEqual(
      refusals.map((r) => [r.statusCode, r.json().error, r.json().reason]),
      [
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "stale"],
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
    // Within the tolerance it is taken.
    assert.equal((await deliver(a, body, a.secret, nowSeconds - 299)).statusCode, 200);
    assert.equal(await stored(env, a, "events"), 1);
  });

  test("a delivery lands only in its connector's account; unknown, removed or other-kind ids are 404", async () => {
    const a = await bookingAccount(env, "calendly");
    const b = await bookingAccount(env, "calendly");
    // B's key on A's connector: refused, nothing anywhere.
    assert.equal((await deliver(a, annCreated, b.secret)).statusCode, 401);
    assert.equal((await deliver(b, annCreated)).statusCode, 200);
    assert.equal(await stored(env, a, "events"), 0);
    assert.deepEqual(await events(env, a), []);
    assert.equal((await events(env, b)).length, 1);

    // A Cal.com connector's id is no Calendly connector.
    const calcom = await bookingAccount(env, "calcom");
    assert.equal((await deliver({ ...calcom, secret: calcom.secret }, annCreated)).statusCode, 404);
    await removeConnector(env.db, { account: a.accountId, id: a.connectorId });
    const removed = await deliver(a, bobCreated);
    assert.deepEqual([removed.statusCode, removed.json().error], [404, "not_found"]);
    assert.equal(await stored(env, a, "events"), 0);
  });
});
