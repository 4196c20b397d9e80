import type { CrmEvent } from "../ingest/crm-event.ts";
import {
  type BookingAction,
  ignored,
  instant,
  type Json,
  localDateTime,
  obj,
  store,
  str,
  utmFields,
} from "./booking-action.ts";

/*
 * What a Calendly webhook delivery becomes (docs/connectors.md "Calendly"). Pure: the store writes
 * the result. Payloads: https://developer.calendly.com/docs/webhooks/overview (envelope `event`,
 * `created_at`, `payload`); the invitee payload is the Invitee resource (`uri`, `email`, `name`,
 * `scheduled_event`, `tracking`, `cancellation`, `no_show`).
 *
 * Event ids are stable per invitee and kind — `calendly:<invitee uuid>:booking|cancel|no_show` —
 * so a delivery sent again, or another delivery about the same invitee, updates one record.
 */

export interface CalendlyEnvelope {
  event: string;
  created_at: string;
  payload: Json;
}

/** The invitee's uuid: the last segment of `…/scheduled_events/<event>/invitees/<uuid>`. */
function inviteeUuid(payload: Json): string | null {
  const uri = str(payload.uri);
  const fromUri = uri?.match(/\/invitees\/([^/?#]+)/)?.[1];
  // A no-show resource names its invitee by `invitee` instead.
  const fromNoShow = str(payload.invitee)?.match(/\/invitees\/([^/?#]+)/)?.[1];
  return (fromUri ?? fromNoShow)?.slice(0, 100) ?? null;
}

/**
 * The delivery's key: Calendly sends no delivery id, and a retry resends the same body, so the
 * event name, the resource's uri and the envelope's creation time name one delivery.
 */
export function calendlyDeliveryId(e: CalendlyEnvelope): string {
  return `${e.event}:${str(e.payload.uri) ?? ""}:${e.created_at}`.slice(0, 500);
}

function inviteeEvent(
  uuid: string,
  type: "booking" | "cancel" | "no_show",
  at: string,
  payload: Json,
  timezone: string,
): CrmEvent {
  const meeting = obj(payload.scheduled_event);
  const start = instant(meeting.start_time);
  const local = start ? localDateTime(start, timezone) : null;
  const host = obj(Array.isArray(meeting.event_memberships) ? meeting.event_memberships[0] : null);
  const first = str(payload.first_name);
  const last = str(payload.last_name);
  return {
    id: `calendly:${uuid}:${type}`,
    event_type: type,
    event_datetime: at,
    contact_email: str(payload.email),
    contact_name:
      (str(payload.name) ?? ([first, last].filter(Boolean).join(" ") || null))?.slice(0, 200) ?? null,
    contact_phone: str(payload.text_reminder_number)?.slice(0, 40) ?? null,
    booking_date: local?.date ?? null,
    booking_time: local?.time ?? null,
    calendar_name: str(meeting.name)?.slice(0, 200) ?? null,
    assigned_user_name: str(host.user_name)?.slice(0, 200) ?? null,
    ...utmFields(obj(payload.tracking)),
  };
}

const USED = new Set([
  "invitee.created",
  "invitee.canceled",
  "invitee_no_show.created",
  "invitee_no_show.deleted",
]);

/** `timezone`: the account's, for booking_date / booking_time. */
export function calendlyAction(e: CalendlyEnvelope, timezone: string): BookingAction {
  if (!USED.has(e.event)) return ignored(`event ${e.event} is not used`);
  const p = e.payload;
  const uuid = inviteeUuid(p);
  const sentAt = instant(e.created_at);
  if (!uuid || !sentAt) return ignored("no invitee uri or no created_at");

  if (e.event === "invitee.created") {
    const at = instant(p.created_at) ?? sentAt;
    return store([inviteeEvent(uuid, "booking", at, p, timezone)]);
  }
  if (e.event === "invitee.canceled") {
    const at = instant(obj(p.cancellation).created_at) ?? instant(p.updated_at) ?? sentAt;
    return store([inviteeEvent(uuid, "cancel", at, p, timezone)]);
  }
  if (e.event === "invitee_no_show.created") {
    const at = instant(obj(p.no_show).created_at) ?? instant(p.created_at) ?? sentAt;
    // A no-show resource without the invitee's email still records the no-show, without a contact.
    return store([inviteeEvent(uuid, "no_show", at, p, timezone)]);
  }
  // invitee_no_show.deleted, Calendly's "undo no-show": the invitee did attend. The no-show record
  // goes, as if never marked.
  return store([], [`calendly:${uuid}:no_show`]);
}
