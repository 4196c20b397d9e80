import { z } from "zod";
import { capiPixels } from "../queries/capi-pixels.ts";
import { defineRoute } from "./route-def.ts";

export const capiRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/capi/pixels",
    scope: "read:capi",
    input: z.object({}),
    description:
      "Connected ad-network pixels (conversions API) and the default one: platform, pixel id, name, whether a token is stored, routing. Tokens are never returned.",
    handler: ({ tx, tenant }) => capiPixels(tx, tenant.accountId),
  }),
];
