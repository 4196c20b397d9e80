import { z } from "zod";
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
];
