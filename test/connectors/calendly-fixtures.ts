/*
 * Calendly webhook deliveries written out by hand in the shapes of Calendly's documentation:
 *
 * - Webhooks (envelope `event`, `created_at`, `created_by`, `payload`; the signature
 *   `Calendly-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`):
 *   https://developer.calendly.com/docs/webhooks/overview
 * - Sample payloads per event (`invitee.created`, `invitee.canceled`, `invitee_no_show.created`,
 *   `invitee_no_show.deleted`, `routing_form_submission.created`, …):
 *   https://developer.calendly.com/api-docs/calendly-api/webhooks/get-sample-webhook-data
 * - The Invitee resource the invitee payloads carry (`uri`, `email`, `name`, `scheduled_event`,
 *   `tracking` with utm_*, `cancellation`, `no_show` {uri, created_at}):
 *   https://developer.calendly.com/api-docs/calendly-api/scheduled-events/get-event-invitee
 * - Reschedules fire invitee.canceled (`rescheduled: true`) and invitee.created:
 *   https://developer.calendly.com/docs/api-guides/see-how-webhook-payloads-change-when-invitees-reschedule-events
 *
 * Times are in March 2026, the tests' clock month (Europe/Paris is UTC+2 from March 29).
 */

const API = "https://api.calendly.com";
const USER = `${API}/users/AAAAUSER0000001`;

interface InviteeOptions {
  event: string;
  invitee: string;
  email: string;
  name: string;
  start: string;
  createdAt: string;
  tracking?: Record<string, string | null>;
  status?: "active" | "canceled";
  cancellation?: Record<string, unknown> | null;
  noShow?: Record<string, unknown> | null;
}

const noTracking = {
  utm_campaign: null,
  utm_source: null,
  utm_medium: null,
  utm_content: null,
  utm_term: null,
  salesforce_uuid: null,
};

function invitee(type: string, sentAt: string, o: InviteeOptions) {
  const eventUri = `${API}/scheduled_events/${o.event}`;
  return {
    created_at: sentAt,
    created_by: USER,
    event: type,
    payload: {
      cancel_url: `https://calendly.com/cancellations/${o.invitee}`,
      created_at: o.createdAt,
      email: o.email,
      event: eventUri,
      first_name: null,
      last_name: null,
      name: o.name,
      new_invitee: null,
      old_invitee: null,
      questions_and_answers: [],
      reschedule_url: `https://calendly.com/reschedulings/${o.invitee}`,
      rescheduled: false,
      status: o.status ?? "active",
      text_reminder_number: null,
      timezone: "Europe/Paris",
      tracking: { ...noTracking, ...o.tracking },
      updated_at: o.createdAt,
      uri: `${eventUri}/invitees/${o.invitee}`,
      routing_form_submission: null,
      scheduled_event: {
        uri: eventUri,
        name: "Discovery call",
        meeting_notes_plain: null,
        meeting_notes_html: null,
        status: o.status ?? "active",
        start_time: o.start,
        end_time: o.start.replace(
          /T(\d{2})/,
          (_m, h: string) => `T${String(Number(h) + 1).padStart(2, "0")}`,
        ),
        event_type: `${API}/event_types/DISCOVERY00001`,
        location: { type: "google_conference", status: "pushed", join_url: "https://meet.google.com/abc" },
        invitees_counter: { total: 1, active: o.status === "canceled" ? 0 : 1, limit: 1 },
        created_at: o.createdAt,
        updated_at: o.createdAt,
        event_memberships: [{ user: USER, user_email: "sam.closer@example.com", user_name: "Sam Closer" }],
        event_guests: [],
      },
      cancellation: o.cancellation ?? undefined,
      no_show: o.noShow ?? null,
      payment: null,
      reconfirmation: null,
    },
  };
}

/** Ann books from the newsletter: Calendly passed the booking link's UTM in `tracking`. */
const ann: InviteeOptions = {
  event: "EVANN00000000001",
  invitee: "INVANN000000001",
  email: "Ann.Booker@Example.com",
  name: "Ann Booker",
  // 22:30 UTC on the 31st is 00:30 on April 1st in Paris (UTC+2).
  start: "2026-03-31T22:30:00.000000Z",
  createdAt: "2026-03-10T09:00:00.000000Z",
  tracking: { utm_source: "newsletter", utm_medium: "email", utm_campaign: "spring-webinar" },
};
export const annCreated = invitee("invitee.created", "2026-03-10T09:00:01.000000Z", ann);

/** Bob books, then cancels. */
const bob: InviteeOptions = {
  event: "EVBOB00000000001",
  invitee: "INVBOB000000001",
  email: "bob@example.com",
  name: "Bob Client",
  start: "2026-03-30T07:30:00.000000Z",
  createdAt: "2026-03-12T15:00:00.000000Z",
};
export const bobCreated = invitee("invitee.created", "2026-03-12T15:00:01.000000Z", bob);
export const bobCanceled = invitee("invitee.canceled", "2026-03-14T08:00:01.000000Z", {
  ...bob,
  status: "canceled",
  cancellation: {
    canceled_by: "Bob Client",
    reason: "Something came up",
    canceler_type: "invitee",
    created_at: "2026-03-14T08:00:00.000000Z",
  },
});

/** Cara books, is marked a no-show, and the host takes the mark back (she had joined late). */
const cara: InviteeOptions = {
  event: "EVCARA0000000001",
  invitee: "INVCARA00000001",
  email: "cara@example.com",
  name: "Cara Lead",
  start: "2026-03-16T10:00:00.000000Z",
  createdAt: "2026-03-11T10:00:00.000000Z",
};
export const caraCreated = invitee("invitee.created", "2026-03-11T10:00:01.000000Z", cara);
const caraNoShow = {
  uri: `${API}/invitee_no_shows/NOSHOWCARA00001`,
  created_at: "2026-03-16T11:05:00.000000Z",
};
export const caraNoShowCreated = invitee("invitee_no_show.created", "2026-03-16T11:05:01.000000Z", {
  ...cara,
  noShow: caraNoShow,
});
export const caraNoShowDeleted = invitee("invitee_no_show.deleted", "2026-03-16T12:00:01.000000Z", {
  ...cara,
  noShow: null,
});

/** An event this connector does not use. */
export const routingForm = {
  created_at: "2026-03-20T10:00:00.000000Z",
  created_by: USER,
  event: "routing_form_submission.created",
  payload: {
    uri: `${API}/routing_form_submissions/RFS0000000001`,
    routing_form: `${API}/routing_forms/RF00000000001`,
    questions_and_responses: [],
    tracking: noTracking,
    result: { type: "event_type", value: `${API}/event_types/DISCOVERY00001` },
    submitter: null,
    submitter_type: null,
    created_at: "2026-03-20T10:00:00.000000Z",
    updated_at: "2026-03-20T10:00:00.000000Z",
  },
};
