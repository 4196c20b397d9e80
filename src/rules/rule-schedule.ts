import type { Logger } from "pino";
import { type RuleEngineDeps, runRules } from "./rule-engine.ts";

/**
 * Evaluates every account's enabled rules every `intervalMs` inside `ascribe serve` (0: never), one
 * evaluation after the other; a failed evaluation is logged and the next one runs as planned.
 */
export function scheduleRules(deps: RuleEngineDeps, options: { intervalMs: number; logger: Logger }) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = runRules(deps)
      .then((outcomes) => {
        const acted = outcomes.filter((o) => o.actions.length > 0).length;
        options.logger.info({ rules: outcomes.length, acted }, "ad rules evaluated");
      })
      .catch((err: unknown) => options.logger.error({ err }, "ad rule evaluation failed"))
      .finally(() => {
        if (!stopped) schedule();
      });
  };
  const schedule = () => {
    timer = setTimeout(tick, options.intervalMs);
    timer.unref();
  };
  if (options.intervalMs > 0) schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
