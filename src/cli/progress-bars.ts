import { createReadStream } from "node:fs";
import { Presets, SingleBar } from "cli-progress";
import type { DemoProgress } from "../demo/write.ts";
import type { ImportProgress } from "../import/run-import.ts";

/** Progress of `ascribe demo`: phases catalog → contacts → sale counting. */
export function demoProgressBar() {
  const bar = new SingleBar(
    { format: "{bar} {percentage}% | {phase} {value}/{total}" },
    Presets.shades_classic,
  );
  let phase = "";
  let stopped = false;
  return {
    update: (p: DemoProgress) => {
      if (phase === "") bar.start(Math.max(p.total, 1), p.done, { phase: p.phase });
      else if (p.phase !== phase) bar.setTotal(Math.max(p.total, 1));
      phase = p.phase;
      bar.update(p.done, { phase: p.phase });
    },
    stop: () => {
      if (!stopped && phase !== "") bar.stop();
      stopped = true;
    },
  };
}

/** A progress bar on a terminal: lines read out of the file's lines. */
export async function progressBar(path: string) {
  let total = 0;
  for await (const chunk of createReadStream(path)) {
    for (const byte of chunk as Buffer) if (byte === 10) total += 1;
  }
  const bar = new SingleBar(
    {
      format:
        "{bar} {percentage}% | {value}/{total} lines | {imported} new, {updated} updated, {errors} errors",
    },
    Presets.shades_classic,
  );
  bar.start(Math.max(total, 1), 0, { imported: 0, updated: 0, errors: 0 });
  let stopped = false;
  return {
    update: (p: ImportProgress) =>
      bar.update(p.lines, { imported: p.imported, updated: p.updated, errors: p.errors }),
    stop: () => {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}
