import { z } from "zod";
import { icpCriteria } from "../queries/icp-criteria.ts";
import { replaceIcpCriteria } from "../queries/replace-icp-criteria.ts";
import { defineRoute } from "./route-def.ts";
import { jsonObject, success } from "./shapes.ts";

export const icpRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/icp/criteria",
    scope: "read:icp",
    input: z.object({}),
    output: jsonObject(),
    description: "The account's ideal-customer-profile (ICP) criteria object; {} until set.",
    handler: ({ tx, tenant }) => icpCriteria(tx, tenant.accountId),
  }),
  defineRoute({
    methods: ["PUT", "POST"],
    path: "/icp",
    scope: "write:icp",
    input: z.object({ icp: z.record(z.string(), z.unknown()) }),
    required: { field: "icp", error: "missing icp object" },
    output: success({}),
    example: { icp: { countries: ["FR", "BE", "CH"], industries: ["coaching"] } },
    description:
      "Replaces the account's ideal-customer-profile (ICP) criteria with the `icp` object (free-form JSON, e.g. { countries, industries }): the whole object is replaced, not merged; read it back with GET /icp/criteria.",
    handler: async ({ tx, tenant, input }) => {
      await replaceIcpCriteria(tx, tenant.accountId, { criteria: input.icp });
      return { success: true } as const;
    },
  }),
];
