import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { DemoProgress } from "../demo/write.ts";
import type { ImportKindName } from "../import/kinds.ts";
import type { ImportProgress, ImportSummary } from "../import/run-import.ts";
import type { RunOutcome } from "../rules/rule-engine.ts";
import { accountOption, admin, CliError, jsonOption, partialFailure, print } from "./output.ts";
import { demoProgressBar, progressBar } from "./progress-bars.ts";

/** The kinds `ascribe import` takes, named here so that --help needs none of the importers loaded. */
export const IMPORT_KINDS = [
  "spend",
  "events",
  "touchpoints",
  "purchases",
  "calls",
  "pixels",
  "creative-requests",
  "rules",
] as const satisfies readonly ImportKindName[];

function importReport(s: ImportSummary): string {
  return [
    `imported ${s.imported}, updated ${s.updated}, skipped ${s.skipped}, errors ${s.errors.length}`,
    ...s.errors.slice(0, 20).map((e) => `  line ${e.line}: ${e.error}`),
    ...(s.errors.length > 20 ? [`  … and ${s.errors.length - 20} more (see --json)`] : []),
  ].join("\n");
}

/** `ascribe migrate`, `demo`, `import` and `rules run`: data in and work done on it. */
export function registerDataCommands(program: Command): void {
  program
    .command("migrate")
    .description("apply pending migrations")
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      const r = await admin("migrate", {});
      print(r, Boolean(o.json), () => "migrations applied");
    });

  program
    .command("demo")
    .description("create an account filled with a realistic, deterministic data set (same seed, same data)")
    .option("--seed <n>", "seed", "1")
    .option("--days <d>", "days of history (7-365)", "90")
    .option("--scale <s>", "volume multiplier (0.1-200; 100 gives over 1,000,000 events)", "1")
    .addOption(jsonOption())
    .action(async (o: { seed: string; days: string; scale: string; json?: boolean }) => {
      const bar = process.stderr.isTTY ? demoProgressBar() : null;
      try {
        const r = await admin("demo", { seed: o.seed, days: o.days, scale: o.scale }, (p) =>
          bar?.update(p as DemoProgress),
        );
        bar?.stop();
        print(
          r,
          Boolean(o.json),
          (d: { account_id: string; client_key: string; key: string }) =>
            `demo account ${d.account_id}, client key ${d.client_key}\nkey (full scope): ${d.key}`,
        );
      } finally {
        bar?.stop();
      }
    });

  program
    .command("import")
    .description(
      "bulk import one kind of record from a .jsonl or .csv file (replays update, never duplicate); exits 2 when a line was refused",
    )
    .argument("<kind>", IMPORT_KINDS.join(" | "))
    .argument("<file>", "a .jsonl or .csv (header row) file")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (kind: string, file: string, o: { account: string; json?: boolean }) => {
      const path = resolve(file);
      if (!existsSync(path)) throw new CliError(`${file}: no such file`);
      const bar = process.stderr.isTTY ? await progressBar(path) : null;
      try {
        const r = (await admin("import", { kind, account: o.account, file: path }, (p) =>
          bar?.update(p as ImportProgress),
        )) as ImportSummary;
        bar?.stop();
        print(r, Boolean(o.json), importReport);
        const refused = r.errors.length;
        if (refused > 0) {
          partialFailure(`${refused} line${refused === 1 ? " was" : "s were"} refused; the others landed`);
        }
      } finally {
        bar?.stop();
      }
    });

  program
    .command("rules")
    .description("automated ad rules")
    .command("run")
    .description(
      "evaluate the enabled ad rules now (each dry or armed as set), every account's or one's; exits 2 when a run failed",
    )
    .option("--account <id>", "only this account's rules (UUID)")
    .addOption(jsonOption())
    .action(async (o: { account?: string; json?: boolean }) => {
      const runs = (await admin("rules.run", { account: o.account })) as RunOutcome[];
      print(runs, Boolean(o.json), (list: RunOutcome[]) =>
        list.length === 0
          ? "no enabled rule"
          : list
              .map((run) => `${run.rule_id} ${run.dry_run ? "dry run" : "armed"}: ${run.summary}`)
              .join("\n"),
      );
      const failed = runs.filter((run) => run.status === "error").length;
      if (failed > 0) {
        partialFailure(
          `${failed} of ${runs.length} rule runs failed (their actions say why; retried next run)`,
        );
      }
    });
}
