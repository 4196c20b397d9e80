import type { CrmEvent } from "../ingest/crm-event.ts";
import {
  type BookingAction,
  ignored,
  instant,
  isObject,
  type Json,
  localDateTime,
  obj,
  store,
  str,
  utmFields,
} from "./booking-action.ts";

/*
 * What a Cal.com webhook delivery becomes (docs/connectors.md "Cal.com"). Pure: the store writes the
 * result. Payloads: https://cal.com/docs/developing/guides/automation/webhooks (envelope
 * `triggerEvent`, `createdAt`, `payload`; a booking's `uid`, `startTime`, `attendees[]`,
 * `organizer`, `metadata`). BOOKING_NO_SHOW_UPDATED carries `bookingUid` and
 * `attendees[] {email, noShow}` only.
 *
 * Event ids are stable per booking and kind — `calcom:<uid>:booking|cancel`, and per attendee for
 * no-shows, `calcom:<uid>:no_show:<email>` — so a delivery sent again updates one record.
 */

export interface CalcomEnvelope {
  triggerEvent: string;
  createdAt: string;
  payload: Json;
}

const attendeesOf = (payload: Json): Json[] =>
  Array.isArray(payload.attendees) ? payload.attendees.filter(isObject) : [];
const bookingUid = (payload: Json) => (str(payload.uid) ?? str(payload.bookingUid))?.slice(0, 100) ?? null;

/**
 * The delivery's key: Cal.com sends no delivery id; its retries resend the same body, so the
 * trigger, the booking's uid and the envelope's `createdAt` name one delivery.
 */
export function calcomDeliveryId(e: CalcomEnvelope): string {
  return `${e.triggerEvent}:${bookingUid(e.payload) ?? ""}:${e.createdAt}`.slice(0, 500);
}

function bookingEvent(
  id: string,
  type: "booking" | "cancel" | "no_show",
  at: string,
  payload: Json,
  attendee: Json,
  timezone: string,
): CrmEvent {
  const start = instant(payload.startTime);
  const local = start ? localDateTime(start, timezone) : null;
  return {
    id,
    event_type: type,
    event_datetime: at,
    contact_email: str(attendee.email),
    contact_name: str(attendee.name)?.slice(0, 200) ?? null,
    contact_phone: str(attendee.phoneNumber)?.slice(0, 40) ?? null,
    booking_date: local?.date ?? null,
    booking_time: local?.time ?? null,
    calendar_name: (str(payload.eventTitle) ?? str(payload.title))?.slice(0, 200) ?? null,
    assigned_user_name: str(obj(payload.organizer).name)?.slice(0, 200) ?? null,
    // Cal.com keeps the booking link's query parameters (utm_*) in the booking's metadata.
    ...utmFields(obj(payload.metadata)),
  };
}

const emailKey = (attendee: Json) => str(attendee.email)?.toLowerCase().slice(0, 100) ?? null;

/** No-shows, per attendee: marked ones stored, unmarked ones taken back. */
function noShows(uid: string, at: string, payload: Json, timezone: string, unmark: boolean): BookingAction {
  const events: CrmEvent[] = [];
  const remove: string[] = [];
  for (const attendee of attendeesOf(payload)) {
    const key = emailKey(attendee);
    if (!key) continue;
    const id = `calcom:${uid}:no_show:${key}`;
    if (attendee.noShow === true) events.push(bookingEvent(id, "no_show", at, payload, attendee, timezone));
    else if (unmark && attendee.noShow === false) remove.push(id);
  }
  if (events.length === 0 && remove.length === 0) return ignored("no attendee marked as a no-show");
  return store(events, remove);
}

const USED = new Set([
  "BOOKING_CREATED",
  "BOOKING_RESCHEDULED",
  "BOOKING_CANCELLED",
  "BOOKING_NO_SHOW_UPDATED",
  "MEETING_ENDED",
]);

/** `timezone`: the account's, for booking_date / booking_time. */
export function calcomAction(e: CalcomEnvelope, timezone: string): BookingAction {
  if (!USED.has(e.triggerEvent)) return ignored(`trigger ${e.triggerEvent} is not used`);
  const p = e.payload;
  const uid = bookingUid(p);
  const at = instant(e.createdAt);
  if (!uid || !at) return ignored("no booking uid or no createdAt");
  // The booker is the first attendee; further attendees are guests.
  const booker = attendeesOf(p)[0] ?? {};

  // A rescheduled booking is a new booking (a new uid) in Cal.com; BOOKING_CREATED is not sent for it.
  if (e.triggerEvent === "BOOKING_CREATED" || e.triggerEvent === "BOOKING_RESCHEDULED")
    return store([bookingEvent(`calcom:${uid}:booking`, "booking", at, p, booker, timezone)]);
  if (e.triggerEvent === "BOOKING_CANCELLED")
    return store([bookingEvent(`calcom:${uid}:cancel`, "cancel", at, p, booker, timezone)]);
  if (e.triggerEvent === "BOOKING_NO_SHOW_UPDATED") return noShows(uid, at, p, timezone, true);
  // MEETING_ENDED names its no-shows only when Cal Video (or the host) marked them.
  return noShows(uid, at, p, timezone, false);
}
