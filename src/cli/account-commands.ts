import { type Command, Option } from "commander";
import { accountOption, admin, type Invitation, invitationLine, jsonOption, print, table } from "./output.ts";

const PLANS = ["free", "pro", "business"];

interface ListedAccount {
  id: string;
  name: string;
  plan: string;
  timezone: string;
  currency: string;
  created_at: string;
}

/** `ascribe accounts …`: the tenants of this instance. */
export function registerAccountCommands(program: Command): void {
  const accounts = program.command("accounts").description("accounts (tenants): create, list, change");
  accounts
    .command("create")
    .description("create an account and print its id and client key")
    .requiredOption("--name <name>", "account name")
    .addOption(new Option("--plan <plan>", "plan (free has no API access)").choices(PLANS).default("pro"))
    .option("--timezone <tz>", "IANA timezone of its reports' days", "UTC")
    .option("--currency <cur>", "ISO 4217 currency", "EUR")
    .option("--owner <email>", "also create this user as owner and print their one-time link")
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
        const r = await admin("accounts.create", o);
        print(
          r,
          Boolean(o.json),
          (a: { id: string; name: string; plan: string; client_key: string } & Invitation) =>
            `account ${a.id} (${a.name}, plan ${a.plan}), client key ${a.client_key}${invitationLine(a, o.owner)}`,
        );
      },
    );
  accounts
    .command("list")
    .description("list every account, oldest first")
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      const r = await admin("accounts.list", {});
      print(r, Boolean(o.json), (list: ListedAccount[]) =>
        list.length === 0
          ? "no accounts"
          : table([
              ["ID", "NAME", "PLAN", "TIMEZONE", "CURRENCY", "CREATED"],
              ...list.map((a) => [a.id, a.name, a.plan, a.timezone, a.currency, a.created_at]),
            ]),
      );
    });
  accounts
    .command("set-plan")
    .description("change an account's plan (free: its keys stop working at once)")
    .addOption(accountOption())
    .addOption(new Option("--plan <plan>", "the new plan").choices(PLANS).makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (o: { account: string; plan: string; json?: boolean }) => {
      const r = await admin("accounts.set-plan", o);
      print(
        r,
        Boolean(o.json),
        (a: { id: string; plan: string }) => `account ${a.id} is now on plan ${a.plan}`,
      );
    });
  accounts
    .command("webhook-secret")
    .description("create or rotate the account's webhook signing secret (shown once)")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await admin("accounts.webhook-secret", o);
      print(
        r,
        Boolean(o.json),
        (w: { account_id: string; secret: string }) =>
          `${w.secret}\n(webhook signing secret of account ${w.account_id}; shown only this once)`,
      );
    });

  const domains = program
    .command("domains")
    .description("first-party tracking hosts (a DNS alias of the customer's to this service)");
  domains
    .command("add")
    .description("register a host that serves the tracking script and takes beacons for the account")
    .addOption(accountOption())
    .requiredOption("--host <host>", "e.g. track.example.com (a DNS alias to this service)")
    .addOption(jsonOption())
    .action(async (o: { account: string; host: string; json?: boolean }) => {
      const r = await admin("domains.add", o);
      print(
        r,
        Boolean(o.json),
        (d: { account_id: string; host: string }) => `${d.host} now tracks for account ${d.account_id}`,
      );
    });
  domains
    .command("list")
    .description("list the account's tracking hosts")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await admin("domains.list", o);
      print(r, Boolean(o.json), (list: { host: string; created_at: string }[]) =>
        list.length === 0 ? "no tracking hosts" : table(list.map((d) => [d.host, `added ${d.created_at}`])),
      );
    });
  domains
    .command("remove")
    .description("stop a host tracking for the account")
    .addOption(accountOption())
    .requiredOption("--host <host>", "the host to remove")
    .addOption(jsonOption())
    .action(async (o: { account: string; host: string; json?: boolean }) => {
      const r = await admin("domains.remove", o);
      print(
        r,
        Boolean(o.json),
        (d: { account_id: string; host: string }) => `${d.host} no longer tracks for account ${d.account_id}`,
      );
    });
}
