import { z } from "zod";
import { journeyOfContact } from "../queries/journey-contact.ts";
import { journeysPage, webTouchpointsSince } from "../queries/journeys-list.ts";
import { touchpointsPage } from "../queries/touchpoints-feed.ts";
import { flagParam, limitParam, offsetParam, optionalWindow, windowQuery } from "../reports/window.ts";
import { emailParam, searchParam } from "./contacts.ts";
import { defineRoute, InlineError } from "./route-def.ts";
import { count, day, instant, money, text } from "./shapes.ts";

const TOUCHPOINT_KINDS = ["web", "conversion"] as const;

/** SPEC "UTM object": every field, null when it was not captured. */
const utm = z.object({
  source: text(),
  medium: text(),
  campaign: text(),
  content: text(),
  term: text(),
  campaign_name: text(),
  adset_name: text(),
  ad_name: text(),
  channel: text(),
  type: text(),
  sequence: text(),
  step: text(),
});

/** The ad ids a touch carried (platform ids are strings). */
const adIds = z.object({ ad_id: text(), adset_id: text(), campaign_id: text(), meta_ad_id: text() });

const contact = z.object({ email: text(), phone: text(), first_name: text(), last_name: text() });

const paging = z.object({ limit: count(), offset: count(), returned: count() });

const touchSummary = z.object({
  occurred_at: instant(),
  event_type: z.string(),
  is_paid: z.boolean(),
  platform: text(),
  utm,
  ad_ids: adIds,
});

/** A point of a journey or of the feed. */
const touchpoint = z.object({
  id: z.string(),
  occurred_at: instant(),
  kind: z.enum(TOUCHPOINT_KINDS),
  event_type: z.string(),
  contact_email: text(),
  visitor_id: text(),
  session_id: text(),
  url: text(),
  referrer: text(),
  utm,
  ad_ids: adIds,
  click_ids: z.record(z.string(), z.string()),
  channel: text(),
  platform: text(),
  is_paid: z.boolean(),
  value: money().nullable(),
  currency: text(),
  product: text(),
  is_imported: z.boolean(),
  resolution: z.string(),
  resolved_platform: text(),
  resolved_ad_id: text(),
});

export const journeysRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/journeys",
    scope: "read:journeys",
    input: windowQuery({ limit: limitParam(50, 200), offset: offsetParam(), search: searchParam.optional() }),
    output: z.object({
      coverage: z.object({ web_touchpoints_since: day().nullable() }),
      paging,
      journeys: z.array(
        z.object({
          contact,
          first_seen_at: instant(),
          last_seen_at: instant(),
          first_touch: touchSummary.nullable(),
          last_touch: touchSummary.nullable(),
          touchpoint_counts: z.object({ web: count(), conversion: count(), total: count() }),
          milestones: z.object({
            first_lead_at: instant().nullable(),
            first_booking_at: instant().nullable(),
            first_sale_at: instant().nullable(),
            revenue: money(),
          }),
          event_types_seen: z.array(z.string()),
        }),
      ),
    }),
    description:
      "Contacts' journeys, most recently active first: contact, first and last seen, first and last touch (UTM and ad ids), touchpoint counts, milestones (first lead, booking, sale; revenue) and the event types seen. coverage.web_touchpoints_since: before that day, no web touch does not mean no visit. from/to on the last activity (no window without them); search on an email fragment; limit default 50, max 200; offset default 0.",
    handler: async ({ tx, tenant, input, now }) => {
      const journeys = await journeysPage(tx, tenant.accountId, {
        window: optionalWindow(input, tenant, now),
        search: input.search,
        limit: input.limit,
        offset: input.offset,
      });
      return {
        coverage: { web_touchpoints_since: await webTouchpointsSince(tx, tenant.accountId, tenant.timezone) },
        paging: { limit: input.limit, offset: input.offset, returned: journeys.length },
        journeys,
      };
    },
  }),
  defineRoute({
    methods: ["GET"],
    path: "/journeys/contact",
    scope: "read:journeys",
    input: z.object({ email: emailParam, pageviews: flagParam() }),
    output: z.object({
      contact: contact.nullable(),
      first_touch_at: instant().nullable(),
      last_touch_at: instant().nullable(),
      counts: z.object({ total: count(), web: count(), conversion: count(), page_view: count() }),
      touchpoints: z.array(touchpoint),
    }),
    example: { email: "lucas.durand@example.com", pageviews: "true" },
    description:
      "One contact's journey (email, required): its touchpoint counts and the full chain in time order with the UTM, ad ids and click ids captured at each moment. Page views are left out of the chain unless pageviews = true or 1 (the counts include them). An unknown email gives a null contact and an empty chain.",
    handler: ({ tx, tenant, input }) =>
      journeyOfContact(tx, tenant.accountId, { email: input.email, pageviews: input.pageviews }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/touchpoints",
    scope: "read:journeys",
    input: windowQuery({ limit: limitParam(100, 500), offset: offsetParam(), kind: z.string().optional() }),
    output: z.object({ paging, touchpoints: z.array(touchpoint) }),
    inlineError: z.object({
      error: z.literal("invalid kind (web|conversion)"),
      touchpoints: z.array(z.unknown()).max(0),
    }),
    description:
      "The touchpoint feed, newest first: web visits and conversions with the UTM, ad ids and click ids captured, channel, value, currency, product and whether it was imported. kind = web or conversion (any other kind: 200 with error and an empty list); from/to on the touch's time (no window without them); limit default 100, max 500; offset default 0.",
    handler: async ({ tx, tenant, input, now }) => {
      const kind = TOUCHPOINT_KINDS.find((k) => k === input.kind);
      if (input.kind !== undefined && kind === undefined) {
        return new InlineError("invalid kind (web|conversion)", { touchpoints: [] });
      }
      const touchpoints = await touchpointsPage(tx, tenant.accountId, {
        kind,
        window: optionalWindow(input, tenant, now),
        limit: input.limit,
        offset: input.offset,
      });
      return {
        paging: { limit: input.limit, offset: input.offset, returned: touchpoints.length },
        touchpoints,
      };
    },
  }),
];
