import { z } from "zod";
import { recomputeSaleCounts } from "../ingest/recompute-sale-counts.ts";
import { DEFAULT_SALE_RULE, saleRuleSchema } from "../ingest/sale-counting.ts";
import { replaceSaleRule } from "../queries/replace-sale-rule.ts";
import { defineRoute } from "./route-def.ts";
import { success } from "./shapes.ts";

export const settingsRoutes = [
  defineRoute({
    methods: ["PUT", "POST"],
    path: "/sale-rule",
    scope: "write:settings",
    // A field left out takes its default (docs/metrics.md "Sale counting"); an unknown one is refused,
    // so a misspelt field is never silently ignored.
    input: z.object({ sale_rule: saleRuleSchema.partial().strict() }),
    required: { field: "sale_rule", error: "missing sale_rule object" },
    output: success({ sale_rule: saleRuleSchema, recounted_events: z.number().int() }),
    example: { sale_rule: { dedupe: "contact", window_days: 30 } },
    description:
      'Sets how sales are counted (docs/metrics.md "Sale counting"): `sale_rule` = { source: both|sale|payment, dedupe: contact_product|contact|none, window_days: 0–3650, revenue: amount|value, exclude_baseline: boolean }; a field left out takes its default. Every sale figure and /events\' counted/drop_reason follow at once. Answers the rule in force and how many sale-type events were recounted.',
    handler: async ({ tx, tenant, input }) => {
      const rule = saleRuleSchema.parse({ ...DEFAULT_SALE_RULE, ...input.sale_rule });
      await replaceSaleRule(tx, tenant.accountId, { rule });
      const { events } = await recomputeSaleCounts(tx, tenant.accountId, { rule });
      return { success: true, sale_rule: rule, recounted_events: events } as const;
    },
  }),
];
