import type { Logger } from "pino";

/**
 * Runs `task` every `intervalMs` inside `ascribe serve` (0: never), each run `intervalMs` after the
 * previous one ended, so runs never overlap. A failed run is logged as `failure` and the next one
 * runs as planned; `stop` cancels the next run and waits for one in progress.
 */
export function runPeriodically(
  task: () => Promise<void>,
  options: { intervalMs: number; logger: Logger; failure: string },
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = task()
      .catch((err: unknown) => options.logger.error({ err }, options.failure))
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
