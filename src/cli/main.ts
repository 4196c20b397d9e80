import { createReadStream, existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Presets, SingleBar } from "cli-progress";
import { Command, Option } from "commander";
import {
  answerBusy,
  callAdminSocket,
  DataDirBusyError,
  lockDataDir,
  releaseDataDir,
} from "../admin/admin-socket.ts";
import { type AdminCommand, adminCommands, describeError } from "../admin/commands.ts";
import { type Config, loadConfig } from "../config.ts";
import type { DemoProgress } from "../demo/write.ts";
import { importKinds } from "../import/kinds.ts";
import type { ImportProgress, ImportSummary } from "../import/run-import.ts";
import { createLogger } from "../logger.ts";
import { openAdNetwork, openDatabase, openFiles, openMailer, openSecrets, startService } from "../main.ts";
import { runStdioBridge } from "../mcp/stdio-bridge.ts";
import type { RunOutcome } from "../rules/rule-engine.ts";
import { secureDataDir } from "../storage/data-dir.ts";

class CliError extends Error {}

/**
 * Runs an admin command where the data is: through the running server when it holds the embedded
 * database, else directly on the database.
 */
async function runAdmin(
  config: Config,
  command: AdminCommand,
  args: unknown,
  onProgress: (value: unknown) => void = () => {},
): Promise<unknown> {
  if (config.databaseUrl) return runDirect(config, command, args, onProgress);
  // Whoever holds DATA_DIR (a running server) carries the command out; else take it ourselves.
  for (let attempt = 0; ; attempt++) {
    const reply = await callAdminSocket(config.dataDir, command, args, onProgress);
    if (reply) {
      if (!reply.ok) throw new CliError(reply.error);
      return reply.result;
    }
    try {
      const lock = await lockDataDir(config.dataDir, answerBusy);
      try {
        return await runDirect(config, command, args, onProgress);
      } finally {
        await releaseDataDir(lock);
      }
    } catch (err) {
      // A server bound the socket between our call and our lock: ask it instead.
      if (!(err instanceof DataDirBusyError) || attempt > 0) throw err;
    }
  }
}

async function runDirect(
  config: Config,
  command: AdminCommand,
  args: unknown,
  progress: (value: unknown) => void,
): Promise<unknown> {
  // The keyring warning belongs to the server's log; a command's stderr is its one-line error.
  // DATA_DIR is made private before anything in it is opened, as `ascribe serve` does.
  await secureDataDir(config.dataDir);
  const secrets = await openSecrets(config, () => {});
  const db = await openDatabase(config);
  try {
    await db.migrate();
    const siteUrl = () => config.siteUrl ?? `http://localhost:${config.port}`;
    const files = openFiles(config, secrets, siteUrl);
    const mailer = openMailer(config, siteUrl);
    const adNetwork = await openAdNetwork(config);
    try {
      return await adminCommands[command](
        { db, secrets, files, network: adNetwork.network, mailer, siteUrl, progress },
        args,
      );
    } finally {
      await adNetwork.close();
    }
  } catch (err) {
    throw new CliError(describeError(err));
  } finally {
    await db.close();
  }
}

function print(result: unknown, json: boolean, human: (r: never) => string) {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${human(result as never)}\n`);
}

interface Invitation {
  invite_url?: string;
  mailed?: boolean;
  mail_error?: string;
}

/** The one-time link line of a command that invites someone. */
function invitationLine(i: Invitation, email: string | undefined): string {
  if (!i.invite_url) return "";
  const sent = i.mailed
    ? ` (also mailed to ${email})`
    : i.mail_error
      ? ` (mailing it failed: ${i.mail_error})`
      : "";
  return `\n  one-time link for ${email} to choose a password (valid 7 days)${sent}:\n  ${i.invite_url}`;
}

const jsonOption = () => new Option("--json", "print JSON");

export function buildCli(): Command {
  const program = new Command("ascribe").description("Ascribe: attribution and sales intelligence").version(
    (
      JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
        version: string;
      }
    ).version,
  );

  program
    .command("serve")
    .description("run the HTTP service")
    .action(async () => {
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

  program
    .command("migrate")
    .description("apply pending migrations")
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "migrate", {});
      print(r, Boolean(o.json), () => "migrations applied");
    });

  const accounts = program.command("accounts").description("accounts");
  accounts
    .command("create")
    .requiredOption("--name <name>", "account name")
    .addOption(new Option("--plan <plan>").choices(["free", "pro", "business"]).default("pro"))
    .option("--timezone <tz>", "IANA timezone", "UTC")
    .option("--currency <cur>", "ISO 4217 currency", "EUR")
    .option("--owner <email>", "also create this user as owner")
    .addOption(jsonOption())
    .action(
      async (o: {
        name: string;
        plan: string;
        timezone: string;
        currency: string;
        owner?: string;
        json?: boolean;
      }) => {
        const r = await runAdmin(loadConfig(), "accounts.create", o);
        print(
          r,
          Boolean(o.json),
          (a: { id: string; name: string; plan: string; client_key: string } & Invitation) =>
            `account ${a.id} (${a.name}, plan ${a.plan}), client key ${a.client_key}${invitationLine(a, o.owner)}`,
        );
      },
    );
  accounts
    .command("set-plan")
    .requiredOption("--account <id>")
    .addOption(new Option("--plan <plan>").choices(["free", "pro", "business"]).makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (o: { account: string; plan: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "accounts.set-plan", o);
      print(
        r,
        Boolean(o.json),
        (a: { id: string; plan: string }) => `account ${a.id} is now on plan ${a.plan}`,
      );
    });

  accounts
    .command("webhook-secret")
    .description("create or rotate the account's webhook signing secret (shown once)")
    .requiredOption("--account <id>")
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "accounts.webhook-secret", o);
      print(
        r,
        Boolean(o.json),
        (w: { account_id: string; secret: string }) =>
          `${w.secret}\n(webhook signing secret of account ${w.account_id}; shown only this once)`,
      );
    });

  program
    .command("rules")
    .description("automated ad rules")
    .command("run")
    .description("evaluate the enabled ad rules now (each dry or armed as set), every account's or one's")
    .option("--account <id>")
    .addOption(jsonOption())
    .action(async (o: { account?: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "rules.run", { account: o.account });
      print(r, Boolean(o.json), (runs: RunOutcome[]) =>
        runs.length === 0
          ? "no enabled rule"
          : runs
              .map((run) => `${run.rule_id} ${run.dry_run ? "dry run" : "armed"}: ${run.summary}`)
              .join("\n"),
      );
    });

  program
    .command("domains")
    .description("first-party tracking hosts")
    .command("add")
    .requiredOption("--account <id>")
    .requiredOption("--host <host>", "e.g. track.example.com (a DNS alias to this service)")
    .addOption(jsonOption())
    .action(async (o: { account: string; host: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "domains.add", o);
      print(
        r,
        Boolean(o.json),
        (d: { account_id: string; host: string }) => `${d.host} now tracks for account ${d.account_id}`,
      );
    });

  const members = program.command("members").description("account members");
  members
    .command("add")
    .description("add a member (or change their role) and print their one-time link")
    .requiredOption("--account <id>")
    .requiredOption("--email <email>")
    .addOption(new Option("--role <role>").choices(["owner", "admin", "member"]).makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; role: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "members.add", o);
      print(
        r,
        Boolean(o.json),
        (m: { email: string; role: string; account_id: string } & Invitation) =>
          `${m.email} is ${m.role} of account ${m.account_id}${invitationLine(m, m.email)}`,
      );
    });
  members
    .command("list")
    .requiredOption("--account <id>")
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "members.list", o);
      print(r, Boolean(o.json), (list: { email: string; role: string; has_password: boolean }[]) =>
        list.map((m) => `${m.email}\t${m.role}${m.has_password ? "" : "\t(invited)"}`).join("\n"),
      );
    });
  members
    .command("remove")
    .description("remove a member (never the last owner)")
    .requiredOption("--account <id>")
    .requiredOption("--email <email>")
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "members.remove", o);
      print(
        r,
        Boolean(o.json),
        (m: { email: string; account_id: string }) =>
          `${m.email} is no longer a member of account ${m.account_id}`,
      );
    });

  program
    .command("users")
    .description("people who sign in to the application")
    .command("invite")
    .description("print (and mail, with SMTP_URL) a new one-time link for a member to choose a password")
    .requiredOption("--account <id>")
    .requiredOption("--email <email>")
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "users.invite", o);
      print(r, Boolean(o.json), (i: { email: string } & Invitation) => invitationLine(i, i.email).trim());
    });

  const keys = program.command("keys").description("API keys");
  keys
    .command("create")
    .requiredOption("--account <id>")
    .requiredOption("--as <email>", "the owner or admin creating the key")
    .requiredOption("--name <name>")
    .requiredOption("--scopes <scopes>", "comma-separated scopes, or *")
    .addOption(new Option("--expires <when>").choices(["never", "90d", "1y"]).default("never"))
    .addOption(jsonOption())
    .action(
      async (o: {
        account: string;
        as: string;
        name: string;
        scopes: string;
        expires: string;
        json?: boolean;
      }) => {
        const scopes = o.scopes
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
        const r = await runAdmin(loadConfig(), "keys.create", { ...o, scopes });
        print(
          r,
          Boolean(o.json),
          (k: { key: string; id: string; scopes: string[]; expires_at: string | null }) =>
            `${k.key}\n(key ${k.id}, scopes ${k.scopes.join(",")}, expires ${k.expires_at ?? "never"}; shown only this once)`,
        );
      },
    );
  keys
    .command("list")
    .requiredOption("--account <id>")
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "keys.list", o);
      print(
        r,
        Boolean(o.json),
        (
          list: {
            id: string;
            prefix: string;
            name: string;
            scopes: string[];
            revoked_at: string | null;
            last_used_at: string | null;
          }[],
        ) =>
          list.length === 0
            ? "no keys"
            : list
                .map(
                  (k) =>
                    `${k.prefix}  ${k.id}  ${k.name}  [${k.scopes.join(",")}]${k.revoked_at ? "  revoked" : ""}  last used ${k.last_used_at ?? "never"}`,
                )
                .join("\n"),
      );
    });
  keys
    .command("revoke")
    .requiredOption("--account <id>")
    .requiredOption("--as <email>")
    .argument("<id-or-prefix>")
    .addOption(jsonOption())
    // A key prefix is base64url and may begin with "-" (one key in 32): it must reach us as the
    // argument, not be refused as an unknown option.
    .allowUnknownOption()
    .action(async (key: string, o: { account: string; as: string; json?: boolean }) => {
      const r = await runAdmin(loadConfig(), "keys.revoke", { ...o, key });
      print(
        r,
        Boolean(o.json),
        (k: { id: string; revoked_at: string }) => `key ${k.id} revoked at ${k.revoked_at}`,
      );
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
        const r = await runAdmin(loadConfig(), "demo", { seed: o.seed, days: o.days, scale: o.scale }, (p) =>
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
    .command("mcp")
    .description("stdio MCP bridge to a running service, for desktop MCP clients (Claude Desktop, …)")
    .requiredOption("--url <url>", "the service's API base (…/api/v1), site URL or /mcp URL")
    .addOption(
      new Option("--key <key>", "an API key (svc_sk_live_…)").env("ASCRIBE_API_KEY").makeOptionMandatory(),
    )
    .action(async (o: { url: string; key: string }) => {
      // stdout carries the protocol: nothing else may be printed there.
      await runStdioBridge(o);
    });

  program
    .command("import")
    .description(
      "bulk import one kind of record from a .jsonl or .csv file (replays update, never duplicate)",
    )
    .argument("<kind>", Object.keys(importKinds).join(" | "))
    .argument("<file>", "a .jsonl or .csv (header row) file")
    .requiredOption("--account <id>")
    .addOption(jsonOption())
    .action(async (kind: string, file: string, o: { account: string; json?: boolean }) => {
      const path = resolve(file);
      if (!existsSync(path)) throw new CliError(`${file}: no such file`);
      const bar = process.stderr.isTTY ? await progressBar(path) : null;
      try {
        const r = await runAdmin(loadConfig(), "import", { kind, account: o.account, file: path }, (p) =>
          bar?.update(p as ImportProgress),
        );
        bar?.stop();
        print(r, Boolean(o.json), (s: ImportSummary) =>
          [
            `imported ${s.imported}, updated ${s.updated}, skipped ${s.skipped}, errors ${s.errors.length}`,
            ...s.errors.slice(0, 20).map((e) => `  line ${e.line}: ${e.error}`),
            ...(s.errors.length > 20 ? [`  … and ${s.errors.length - 20} more (see --json)`] : []),
          ].join("\n"),
        );
      } finally {
        bar?.stop();
      }
    });

  return program;
}

/** Progress of `ascribe demo`: phases catalog → contacts → sale counting. */
function demoProgressBar() {
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
async function progressBar(path: string) {
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

export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    process.stderr.write(`ascribe: ${describeError(err)}\n`);
    process.exitCode = 1;
  }
}
