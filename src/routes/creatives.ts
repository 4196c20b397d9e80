import { z } from "zod";
import { ackCreativeRequests } from "../queries/ack-creative-requests.ts";
import { CREATIVE_REQUEST_STATUSES, creativeRequests } from "../queries/creative-requests.ts";
import { flagParam, limitParam } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

export const creativesRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/creatives/requests",
    scope: "read:creatives",
    input: z.object({
      status: z
        .enum(CREATIVE_REQUEST_STATUSES, { error: `must be one of ${CREATIVE_REQUEST_STATUSES.join(", ")}` })
        .optional(),
      unnotified: flagParam(),
      limit: limitParam(50, 200),
    }),
    description:
      "Creative needs, oldest to newest: reason, status, requested and filled counts, context, when created and when relayed to a team. Without status, the needs in progress (open and partial); with it, only that status. unnotified = 1 or true: only needs never relayed. limit default 50, max 200.",
    handler: ({ tx, tenant, input }) =>
      creativeRequests(tx, tenant.accountId, {
        status: input.status,
        unnotified: input.unnotified,
        limit: input.limit,
      }),
  }),
  defineRoute({
    methods: ["POST"],
    path: "/creatives/requests/ack",
    scope: "write:creatives",
    input: z.object({ ids: z.array(z.guid()).min(1) }),
    required: { field: "ids", error: "missing ids (array of request UUIDs)", wholeValue: true },
    description:
      "Acknowledges creative needs as relayed to a team: `ids`, a non-empty array of need ids. Sets notified_at on those never relayed before (the status is unchanged) and answers how many it marked, an integer; a replay answers 0.",
    handler: ({ tx, tenant, input, now }) =>
      ackCreativeRequests(tx, tenant.accountId, { ids: input.ids, now }),
  }),
];
