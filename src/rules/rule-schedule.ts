import type { Logger } from "pino";
import { runPeriodically } from "../periodic.ts";
import { type RuleEngineDeps, runRules } from "./rule-engine.ts";

/**
 * Evaluates every account's enabled rules every `intervalMs` inside `ascribe serve` (0: never), one
 * evaluation after the other; a failed evaluation is logged and the next one runs as planned.
 */
export function scheduleRules(deps: RuleEngineDeps, options: { intervalMs: number; logger: Logger }) {
  return runPeriodically(
    async () => {
      const outcomes = await runRules(deps);
      const acted = outcomes.filter((o) => o.actions.length > 0).length;
      options.logger.info({ rules: outcomes.length, acted }, "ad rules evaluated");
    },
    { ...options, failure: "ad rule evaluation failed" },
  );
}
