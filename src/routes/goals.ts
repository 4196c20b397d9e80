import { z } from "zod";
import { replaceGoals } from "../queries/replace-goals.ts";
import { monthStart } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { success } from "./shapes.ts";

const goalSchema = z.object({
  metric_key: z.string().trim().min(1).max(100),
  target_value: z.number().finite(),
});

export const goalRoutes = [
  defineRoute({
    methods: ["PUT", "POST"],
    path: "/goals",
    scope: "write:goals",
    input: z.object({
      goals: z.array(goalSchema).superRefine((goals, ctx) => {
        const seen = new Set<string>();
        goals.forEach((g, i) => {
          if (seen.has(g.metric_key)) {
            ctx.addIssue({ code: "custom", path: [i, "metric_key"], message: `duplicate ${g.metric_key}` });
          }
          seen.add(g.metric_key);
        });
      }),
    }),
    required: { field: "goals", error: "missing goals object" },
    output: success({}),
    example: {
      goals: [
        { metric_key: "leads", target_value: 100 },
        { metric_key: "revenue", target_value: 50000 },
      ],
    },
    description:
      "Replaces the KPI goals of the current month (in the account's timezone): `goals` is an array of { metric_key, target_value }.",
    handler: async ({ tx, tenant, input, now }) => {
      await replaceGoals(tx, tenant.accountId, {
        period: monthStart(now, tenant.timezone),
        goals: input.goals,
      });
      return { success: true } as const;
    },
  }),
];
