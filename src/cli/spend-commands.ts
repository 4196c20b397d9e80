import type { Command } from "commander";
import { Option } from "commander";
import { accountOption, admin, jsonOption, print } from "./output.ts";

interface SyncResult {
  platform: string;
  rows_written: number;
  connectors: { connector: string; from: string; to: string; rows_written: number; rows_deleted: number }[];
}

/** `ascribe spend sync`: pulls a Meta or Google Ads account's daily spend now (docs/connectors.md). */
export function registerSpendCommands(program: Command): void {
  const spend = program.command("spend").description("ad spend from Meta and Google Ads");
  spend
    .command("sync")
    .description(
      "fetch the platform's daily spend per ad for the account's connector(s) and replace those days",
    )
    .addOption(accountOption())
    .addOption(
      new Option("--platform <platform>", "the ad platform")
        .choices(["meta", "google"])
        .makeOptionMandatory(),
    )
    .option("--since <date>", "first day to sync (YYYY-MM-DD); default 28 days back. Up to today (UTC)")
    .addOption(jsonOption())
    .action(async (o: { account: string; platform: string; since?: string; json?: boolean }) => {
      const r = await admin("spend.sync", o);
      print(r, Boolean(o.json), (s: SyncResult) =>
        [
          `${s.platform}: ${s.rows_written} rows written`,
          ...s.connectors.map(
            (c) =>
              `  connector ${c.connector}: ${c.from}..${c.to}, ${c.rows_written} rows (${c.rows_deleted} replaced)`,
          ),
        ].join("\n"),
      );
    });
}
