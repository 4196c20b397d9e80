import { type Command, Option } from "commander";
import { accountOption, admin, type Invitation, invitationLine, jsonOption, print, table } from "./output.ts";

interface ListedKey {
  id: string;
  prefix: string;
  name: string;
  scopes: string[];
  revoked_at: string | null;
  last_used_at: string | null;
}

/** `ascribe members …` and `ascribe users …`: who belongs to an account and signs in. */
function registerMemberCommands(program: Command): void {
  const members = program.command("members").description("account members: add, list, remove");
  members
    .command("add")
    .description("add a member (or change their role) and print their one-time link")
    .addOption(accountOption())
    .requiredOption("--email <email>", "the member's email address")
    .addOption(
      new Option("--role <role>", "owners and admins manage keys and members")
        .choices(["owner", "admin", "member"])
        .makeOptionMandatory(),
    )
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; role: string; json?: boolean }) => {
      const r = await admin("members.add", o);
      print(
        r,
        Boolean(o.json),
        (m: { email: string; role: string; account_id: string } & Invitation) =>
          `${m.email} is ${m.role} of account ${m.account_id}${invitationLine(m, m.email)}`,
      );
    });
  members
    .command("list")
    .description("list the account's members and their roles")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await admin("members.list", o);
      print(r, Boolean(o.json), (list: { email: string; role: string; has_password: boolean }[]) =>
        list.map((m) => `${m.email}\t${m.role}${m.has_password ? "" : "\t(invited)"}`).join("\n"),
      );
    });
  members
    .command("remove")
    .description("remove a member (never the last owner)")
    .addOption(accountOption())
    .requiredOption("--email <email>", "the member's email address")
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; json?: boolean }) => {
      const r = await admin("members.remove", o);
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
    .addOption(accountOption())
    .requiredOption("--email <email>", "the member's email address")
    .addOption(jsonOption())
    .action(async (o: { account: string; email: string; json?: boolean }) => {
      const r = await admin("users.invite", o);
      print(r, Boolean(o.json), (i: { email: string } & Invitation) => invitationLine(i, i.email).trim());
    });
}

/** `ascribe keys …`: API keys, created and revoked in a member's name. */
function registerKeyCommands(program: Command): void {
  const keys = program.command("keys").description("API keys: create, list, revoke");
  keys
    .command("create")
    .description("create an API key and print it, the only time it is shown (not on the free plan)")
    .addOption(accountOption())
    .requiredOption("--as <email>", "the owner or admin creating the key")
    .requiredOption("--name <name>", "what the key is for, shown in lists")
    .requiredOption("--scopes <scopes>", "comma-separated scopes (read:ads,write:events…), or *")
    .addOption(
      new Option("--expires <when>", "when the key stops working")
        .choices(["never", "90d", "1y"])
        .default("never"),
    )
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
        const r = await admin("keys.create", { ...o, scopes });
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
    .description("list the account's keys (never the key itself)")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await admin("keys.list", o);
      print(r, Boolean(o.json), (list: ListedKey[]) =>
        list.length === 0
          ? "no keys"
          : table(
              list.map((k) => [
                k.prefix,
                k.id,
                k.name,
                `[${k.scopes.join(",")}]${k.revoked_at ? " revoked" : ""}`,
                `last used ${k.last_used_at ?? "never"}`,
              ]),
            ),
      );
    });
  keys
    .command("revoke")
    .description("revoke a key: its very next request is refused")
    .addOption(accountOption())
    .requiredOption("--as <email>", "the owner or admin revoking the key")
    .argument("<id-or-prefix>", "the key's id, or the 8-character prefix shown in lists")
    .addOption(jsonOption())
    // A key prefix is base64url and may begin with "-" (one key in 32): it must reach us as the
    // argument, not be refused as an unknown option.
    .allowUnknownOption()
    .action(async (key: string, o: { account: string; as: string; json?: boolean }) => {
      const r = await admin("keys.revoke", { ...o, key });
      print(
        r,
        Boolean(o.json),
        (k: { id: string; revoked_at: string }) => `key ${k.id} revoked at ${k.revoked_at}`,
      );
    });
}

export function registerPeopleCommands(program: Command): void {
  registerMemberCommands(program);
  registerKeyCommands(program);
}
