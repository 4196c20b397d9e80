import { z } from "zod";
import { capiPixels } from "../queries/capi-pixels.ts";
import { defineRoute } from "./route-def.ts";
import { instant, jsonObject, text } from "./shapes.ts";

const pixel = z.object({
  id: z.string(),
  platform: z.string(),
  pixel_id: z.string(),
  name: text(),
  is_default: z.boolean(),
  connected: z.boolean(),
  routing: jsonObject(),
  created_at: instant(),
  updated_at: instant(),
});

export const capiRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/capi/pixels",
    scope: "read:capi",
    input: z.object({}),
    output: z.object({ pixels: z.array(pixel), default: pixel.nullable() }),
    description:
      "Connected ad-network pixels (conversions API) and the default one: platform, pixel id, name, whether a token is stored, routing. Tokens are never returned.",
    handler: ({ tx, tenant }) => capiPixels(tx, tenant.accountId),
  }),
];
