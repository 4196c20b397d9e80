import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { describeError } from "../admin/describe-error.ts";
import { registerAccountCommands } from "./account-commands.ts";
import { registerConnectorCommands } from "./connector-commands.ts";
import { registerDataCommands } from "./data-commands.ts";
import { registerPeopleCommands } from "./people-commands.ts";
import { registerSpendCommands } from "./spend-commands.ts";

/*
 * The `ascribe` command tree. Only commander and the command files load at start: each action
 * imports the service's modules it needs when it runs, so --help and --version answer at once.
 */

export function buildCli(): Command {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  const program = new Command("ascribe")
    .description("Ascribe: attribution and sales intelligence")
    .version(version, "-V, --version", "print the version")
    .helpOption("-h, --help", "print help for the command")
    .helpCommand("help [command]", "print help for a command")
    .addHelpText(
      "after",
      "\nExit status: 0 done; 1 refused or failed, nothing done (one line on stderr); 2 done in part\n(bad import lines, failed rule runs: the report on stdout, one line on stderr).",
    );

  program
    .command("serve")
    .description("run the HTTP service")
    .action(async () => {
      const [{ loadConfig }, { createLogger }, { startService }] = await Promise.all([
        import("../config.ts"),
        import("../logger.ts"),
        import("../main.ts"),
      ]);
      const config = loadConfig();
      const logger = createLogger(config);
      const service = await startService(config, logger);
      const lines = [
        `Ascribe is running`,
        `  site:     ${service.siteUrl}`,
        `  API base: ${service.baseUrl}`,
      ];
      if (service.metricsUrl) lines.push(`  metrics:  ${service.metricsUrl}`);
      if (service.demo) {
        lines.push(
          `  demo account: ${service.demo.accountId}`,
          `  sign in:  ${service.demo.signInUrl}`,
          `            (one-time link for ${service.demo.owner}, the demo account's owner: choose a password, then you are signed in)`,
        );
      }
      if (service.demoKey) {
        lines.push(
          `  demo key: ${service.demoKey}`,
          `            (full scope, shown only this once; try: curl -H "Authorization: Bearer ${service.demoKey}" ${service.baseUrl}/icp/criteria)`,
        );
      }
      // With LOG_FORMAT=json stdout carries log lines only, for a collector that parses each one.
      const banner = config.logFormat === "json" ? process.stderr : process.stdout;
      banner.write(`${lines.join("\n")}\n`);
      const shutdown = (signal: string) => {
        logger.info({ signal }, "shutting down");
        service.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, "shutdown failed");
            process.exit(1);
          },
        );
      };
      process.once("SIGTERM", () => shutdown("SIGTERM"));
      process.once("SIGINT", () => shutdown("SIGINT"));
    });

  registerAccountCommands(program);
  registerPeopleCommands(program);
  registerDataCommands(program);
  registerConnectorCommands(program);
  registerSpendCommands(program);

  program
    .command("mcp")
    .description("stdio MCP bridge to a running service, for desktop MCP clients (Claude Desktop, …)")
    .requiredOption("--url <url>", "the service's API base (…/api/v1), site URL or /mcp URL")
    .addOption(
      new Option("--key <key>", "an API key (svc_sk_live_…)").env("ASCRIBE_API_KEY").makeOptionMandatory(),
    )
    .action(async (o: { url: string; key: string }) => {
      const { runStdioBridge } = await import("../mcp/stdio-bridge.ts");
      // stdout carries the protocol: nothing else may be printed there.
      await runStdioBridge(o);
    });

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    process.stderr.write(`ascribe: ${describeError(err)}\n`);
    process.exitCode = 1;
  }
}
