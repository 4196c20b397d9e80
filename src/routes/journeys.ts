import { z } from "zod";
import { journeyOfContact } from "../queries/journey-contact.ts";
import { journeysPage, webTouchpointsSince } from "../queries/journeys-list.ts";
import { touchpointsPage } from "../queries/touchpoints-feed.ts";
import { flagParam, limitParam, offsetParam, optionalWindow, windowQuery } from "../reports/window.ts";
import { emailParam, searchParam } from "./contacts.ts";
import { defineRoute, InlineError } from "./route-def.ts";

const TOUCHPOINT_KINDS = ["web", "conversion"] as const;

export const journeysRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/journeys",
    scope: "read:journeys",
    input: windowQuery({ limit: limitParam(50, 200), offset: offsetParam(), search: searchParam.optional() }),
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
