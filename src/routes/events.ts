import { z } from "zod";
import { EVENT_TYPES } from "../ingest/crm-event.ts";
import { type EventsCursor, eventsPage } from "../queries/events-list.ts";
import { eventsSummary } from "../queries/events-summary.ts";
import { INSTANT_RANGE_MESSAGE, instantInRange } from "../reports/date-range.ts";
import { limitParam, optionalWindow, reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { count, day, instant, money, text } from "./shapes.ts";

/** The `type` filter's grouping (SPEC): `sale` covers sales and payments; subtypes stay in their type. */
const TYPE_GROUPS: Record<(typeof EVENT_TYPES)[number], readonly string[]> = {
  lead: ["lead"],
  application: ["application"],
  booking: ["booking"],
  no_show: ["no_show"],
  sale: ["sale", "payment"],
  cancel: ["cancel"],
  payment: ["payment"],
  sale_lost: ["sale_lost"],
};

const isoInstant = z.iso.datetime({ offset: true });

/** The instant a cursor names (either form), or null when it is neither form. */
function cursorOf(value: string): EventsCursor | null {
  if (isoInstant.safeParse(value).success) return { at: value };
  if (!/^[A-Za-z0-9_-]+$/.test(value)) return null;
  const decoded = Buffer.from(value, "base64url").toString("utf8");
  const bar = decoded.indexOf("|");
  const at = decoded.slice(0, bar);
  const id = decoded.slice(bar + 1);
  return bar > 0 && id.length > 0 && isoInstant.safeParse(at).success ? { at, id } : null;
}

/**
 * `cursor`: the spec's form, a row's `event_datetime` (ISO 8601; the next page holds events strictly
 * older), or a row's tie-safe `cursor` (base64url of `<instant>|<id>`; the next page continues
 * strictly after that row in (event_datetime desc, id desc) order). Its instant must lie within the
 * years the database can read (reports/date-range.ts).
 */
const cursorParam = z.string().transform((value, ctx): EventsCursor => {
  const cursor = cursorOf(value);
  if (cursor === null) {
    ctx.addIssue({ code: "custom", message: "must be a row's cursor or an event_datetime (ISO 8601)" });
    return z.NEVER;
  }
  if (!instantInRange(cursor.at)) {
    ctx.addIssue({ code: "custom", message: INSTANT_RANGE_MESSAGE });
    return z.NEVER;
  }
  return cursor;
});

export const eventsRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/events",
    scope: "read:events",
    input: windowQuery({
      type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }).optional(),
      rep: z.string().trim().min(1).max(200).optional(),
      limit: limitParam(50, 200),
      cursor: cursorParam.optional(),
    }),
    output: z.array(
      z.object({
        id: z.string(),
        event_type: z.string(),
        event_subtype: text(),
        event_datetime: instant(),
        contact_email: text(),
        contact_name: text(),
        contact_phone: text(),
        contact_id: text(),
        value: money().nullable(),
        amount: money().nullable(),
        product_key: text(),
        product_name: text(),
        assigned_user_name: text(),
        is_paid: z.boolean().nullable(),
        payment_status: text(),
        booking_date: day().nullable(),
        booking_time: text(),
        utm_source: text(),
        utm_campaign: text(),
        utm_content: text(),
        campaign_name: text(),
        calendar_name: text(),
        meta_ad_id: text(),
        is_baseline: z.boolean(),
        cancelled_at: instant().nullable(),
        has_more: z.boolean(),
        counted: z.boolean().nullable(),
        drop_reason: text(),
        group_key: text(),
        contact_seq: count().nullable(),
        cursor: z.string(),
      }),
    ),
    description:
      "CRM events, newest first, with their sale counting (counted, drop_reason, group_key, contact_seq). Filters: type (lead, application, booking, no_show, sale [sales and payments], cancel, payment, sale_lost), rep (assigned rep's name, case-insensitive), from/to (event date; no window without them). limit default 50, max 200. Next page: cursor = the last row's cursor (or its event_datetime); has_more tells whether one exists.",
    handler: ({ tx, tenant, input, now }) =>
      eventsPage(tx, tenant.accountId, {
        types: input.type === undefined ? undefined : TYPE_GROUPS[input.type],
        rep: input.rep,
        window: optionalWindow(input, tenant, now),
        cursor: input.cursor,
        limit: input.limit,
      }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/events/summary",
    scope: "read:events",
    input: windowQuery({}),
    output: z.array(
      z.object({
        platform: text(),
        ad_id: text(),
        ad_name: text(),
        campaign_name: text(),
        leads: count(),
        applications: count(),
        bookings: count(),
        sales: count(),
        no_shows: count(),
        cancellations: count(),
        total_value: money(),
      }),
    ),
    description:
      "CRM results per ad and campaign over a window (from/to, default the last 30 days): leads, applications, bookings, sales (counted purchases), no-shows, cancellations and total value (revenue of the sales); unresolved events grouped by the campaign they name.",
    handler: ({ tx, tenant, input, now }) =>
      eventsSummary(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
];
