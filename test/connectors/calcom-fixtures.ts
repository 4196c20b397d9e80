/*
 * Cal.com webhook deliveries written out by hand in the shapes of Cal.com's documentation:
 *
 * - Webhooks (triggers, the envelope `triggerEvent`, `createdAt`, `payload`; the booking payload's
 *   `uid`, `bookingId`, `title`, `startTime`, `endTime`, `organizer`, `attendees[]`, `responses`,
 *   `metadata`; the signature `X-Cal-Signature-256`, hex HMAC-SHA256 of the body with the secret):
 *   https://cal.com/docs/developing/guides/automation/webhooks
 *   https://cal.com/help/webhooks
 * - BOOKING_NO_SHOW_UPDATED carries `message`, `bookingUid`, `bookingId` and
 *   `attendees[] {email, noShow}` (Cal.com's noShow handler, packages/trpc/server/routers/publicViewer/noShow.handler.ts)
 *
 * Times are in March 2026, the tests' clock month (Europe/Paris is UTC+2 from March 29).
 */

const organizer = {
  id: 7,
  name: "Sam Closer",
  email: "sam.closer@example.com",
  username: "sam",
  timeZone: "Europe/Paris",
  language: { locale: "en" },
  timeFormat: "h:mma",
  utcOffset: 120,
};

interface BookingOptions {
  uid: string;
  bookingId: number;
  email: string;
  name: string;
  start: string;
  metadata?: Record<string, string>;
  status?: "ACCEPTED" | "CANCELLED";
  noShow?: boolean;
}

function booking(trigger: string, createdAt: string, o: BookingOptions) {
  const end = new Date(Date.parse(o.start) + 30 * 60_000).toISOString();
  return {
    triggerEvent: trigger,
    createdAt,
    payload: {
      type: "discovery-call",
      title: `Discovery call between Sam Closer and ${o.name}`,
      description: "",
      additionalNotes: "",
      customInputs: {},
      startTime: o.start,
      endTime: end,
      organizer,
      responses: {
        name: { label: "your_name", value: o.name },
        email: { label: "email_address", value: o.email },
      },
      userFieldsResponses: {},
      attendees: [
        {
          email: o.email,
          name: o.name,
          timeZone: "Europe/Paris",
          language: { locale: "en" },
          ...(o.noShow === undefined ? {} : { noShow: o.noShow }),
        },
      ],
      location: "integrations:daily",
      destinationCalendar: null,
      hideCalendarNotes: false,
      requiresConfirmation: null,
      eventTypeId: 42,
      seatsShowAttendees: true,
      seatsPerTimeSlot: null,
      uid: o.uid,
      appsStatus: [],
      eventTitle: "Discovery call",
      eventDescription: null,
      price: 0,
      currency: "usd",
      length: 30,
      bookingId: o.bookingId,
      metadata: { videoCallUrl: `https://app.cal.com/video/${o.uid}`, ...o.metadata },
      status: o.status ?? "ACCEPTED",
      ...(o.status === "CANCELLED" ? { cancellationReason: "Cannot make it" } : {}),
    },
  };
}

/** Dan books from a Meta ad: the booking link's utm_* parameters are kept in the metadata. */
const dan: BookingOptions = {
  uid: "dAnBkg7x2Q1vY9pLmN3s",
  bookingId: 1001,
  email: "Dan.Prospect@Example.com",
  name: "Dan Prospect",
  // 07:30 UTC on the 30th is 09:30 in Paris (UTC+2).
  start: "2026-03-30T07:30:00.000Z",
  metadata: {
    utm_source: "facebook",
    utm_medium: "paid",
    utm_campaign: "spring-ads",
    utm_content: "video-a",
  },
};
export const danCreated = booking("BOOKING_CREATED", "2026-03-20T10:00:00.000Z", dan);

/** Dan is marked a no-show, then the host unmarks him. */
function noShowUpdate(createdAt: string, noShow: boolean) {
  return {
    triggerEvent: "BOOKING_NO_SHOW_UPDATED",
    createdAt,
    payload: {
      message: noShow ? "x_marked_as_no_show" : "x_unmarked_as_no_show",
      attendees: [{ email: "dan.prospect@example.com", noShow }],
      bookingUid: dan.uid,
      bookingId: dan.bookingId,
    },
  };
}
export const danNoShow = noShowUpdate("2026-03-30T08:10:00.000Z", true);
export const danNoShowUndone = noShowUpdate("2026-03-30T09:00:00.000Z", false);

/** Eve books, then cancels. */
const eve: BookingOptions = {
  uid: "eVeBkg4k8R2wZ6tHcJ5u",
  bookingId: 1002,
  email: "eve@example.com",
  name: "Eve Client",
  start: "2026-03-27T15:00:00.000Z",
};
export const eveCreated = booking("BOOKING_CREATED", "2026-03-21T09:00:00.000Z", eve);
export const eveCancelled = booking("BOOKING_CANCELLED", "2026-03-22T09:00:00.000Z", {
  ...eve,
  status: "CANCELLED",
});

/** Fay books; Cal Video marks her a no-show when the meeting ends. */
const fay: BookingOptions = {
  uid: "fAyBkg9m3T5xQ2vBnK7w",
  bookingId: 1003,
  email: "fay@example.com",
  name: "Fay Lead",
  start: "2026-03-25T13:00:00.000Z",
};
export const fayCreated = booking("BOOKING_CREATED", "2026-03-18T09:00:00.000Z", fay);
export const fayMeetingEnded = booking("MEETING_ENDED", "2026-03-25T13:35:00.000Z", { ...fay, noShow: true });
/** A meeting that ended with everyone present: acknowledged, nothing stored. */
export const danMeetingEnded = booking("MEETING_ENDED", "2026-03-30T08:05:00.000Z", {
  ...dan,
  noShow: false,
});

/** A trigger this connector does not use. */
export const danMeetingStarted = booking("MEETING_STARTED", "2026-03-30T07:30:00.000Z", dan);

/** The webhook form's "Ping test" (trigger PING, a sample booking without a uid). */
export const ping = {
  triggerEvent: "PING",
  createdAt: "2026-03-31T11:59:00.000Z",
  payload: {
    type: "Test",
    title: "Test trigger event",
    startTime: "2026-03-31T11:59:00.000Z",
    endTime: "2026-03-31T11:59:00.000Z",
    attendees: [{ email: "JohnDoe@example.com", name: "John Doe", timeZone: "Europe/London" }],
    organizer: { name: "Cal", email: "no-reply@cal.com", timeZone: "Europe/London" },
  },
};
