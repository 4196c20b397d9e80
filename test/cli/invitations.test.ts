import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Database, openEmbedded, openPostgres } from "../../src/db/client.ts";
import { type LinkHolder, linkHolder } from "../../src/people/one-time-links.ts";
import {
  backend,
  type CliResult,
  cliJson,
  freshServiceEnv,
  runCli,
  type ServiceEnv,
} from "../helpers/spawn-service.ts";

/*
 * The CLI's invitation commands print one-time links (and `--json` an "invite_url"), run directly on
 * the database of a fresh DATA_DIR (no server holds it). Without SMTP_URL nothing is mailed.
 */

const SITE_URL = "https://ascribe.example.test";
const LINK = new RegExp(`^${SITE_URL.replace(/\./g, "\\.")}/set-password/([A-Za-z0-9_-]{43})$`);
const TIMEOUT = { timeout: 240_000 };
// Every command spawns a process (seconds each on a loaded 2-core machine).
const SUITE_TIMEOUT = { timeout: 900_000 };

interface Invited {
  account_id: string;
  email: string;
  invite_url: string;
  mailed: boolean;
}

function show(r: CliResult): string {
  return `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

function tokenOf(url: string): string {
  const token = LINK.exec(url)?.[1];
  assert.ok(token, `not a one-time link of ${SITE_URL}: ${url}`);
  return token;
}

describe(`the CLI's invitations (${backend} database)`, SUITE_TIMEOUT, () => {
  let service: ServiceEnv | undefined;
  let accountId = "";
  let repLink = "";
  const env = () => {
    if (!service) throw new Error("no service environment");
    return service.env;
  };

  /**
   * Whom a link belongs to, read on the CLI's own database. The embedded one is opened only between
   * two commands: one process at a time may hold DATA_DIR.
   */
  async function holderOf(url: string): Promise<LinkHolder | null> {
    if (!service) throw new Error("no service environment");
    const db: Database = service.databaseUrl
      ? await openPostgres(service.databaseUrl, 5_000)
      : await openEmbedded(service.dataDir);
    try {
      return await linkHolder(db, tokenOf(url), new Date());
    } finally {
      await db.close();
    }
  }

  before(async () => {
    service = await freshServiceEnv();
    service.env.SITE_URL = SITE_URL;
    delete service.env.SMTP_URL;
  }, TIMEOUT);
  after(async () => {
    await service?.cleanup();
  }, TIMEOUT);

  test("accounts create --owner --json includes the owner's one-time link", TIMEOUT, async () => {
    const created = await cliJson<{ id: string; invite_url: string; mailed: boolean }>(env(), [
      "accounts",
      "create",
      "--name",
      "Invites",
      "--owner",
      "boss@invites.test",
      "--json",
    ]);
    accountId = created.id;
    assert.ok(created.invite_url.startsWith(`${SITE_URL}/set-password/`), created.invite_url);
    tokenOf(created.invite_url);
    assert.equal(created.mailed, false);
  });

  test("members add --json includes the new member's link", TIMEOUT, async () => {
    const added = await cliJson<Invited & { role: string }>(env(), [
      "members",
      "add",
      "--account",
      accountId,
      "--email",
      "Rep@Invites.test",
      "--role",
      "member",
      "--json",
    ]);
    assert.equal(added.account_id, accountId);
    assert.equal(added.email, "rep@invites.test");
    assert.equal(added.role, "member");
    assert.equal(added.mailed, false);
    tokenOf(added.invite_url);
    repLink = added.invite_url;
  });

  test("members add, for a person, prints the link line", TIMEOUT, async () => {
    const r = await runCli(env(), [
      "members",
      "add",
      "--account",
      accountId,
      "--email",
      "admin@invites.test",
      "--role",
      "admin",
    ]);
    assert.equal(r.code, 0, show(r));
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `admin@invites.test is admin of account ${accountId}`, show(r));
    assert.equal(
      lines[1],
      "  one-time link for admin@invites.test to choose a password (valid 7 days):",
      show(r),
    );
    assert.match(lines[2]?.trim() ?? "", LINK, show(r));
    assert.equal(lines.length, 3, show(r));
  });

  test("users invite --json prints a new link; the earlier one stops working", TIMEOUT, async () => {
    assert.ok(repLink, "members add ran first");
    const again = await cliJson<Invited>(env(), [
      "users",
      "invite",
      "--account",
      accountId,
      "--email",
      "rep@invites.test",
      "--json",
    ]);
    assert.equal(again.email, "rep@invites.test");
    assert.equal(again.mailed, false);
    assert.notEqual(tokenOf(again.invite_url), tokenOf(repLink));
    assert.equal(await holderOf(repLink), null);
    const holder = await holderOf(again.invite_url);
    assert.equal(holder?.email, "rep@invites.test");
    assert.equal(holder?.purpose, "invite");
  });

  test("users invite of someone who is not a member fails with one line", TIMEOUT, async () => {
    const r = await runCli(env(), [
      "users",
      "invite",
      "--account",
      accountId,
      "--email",
      "stranger@invites.test",
    ]);
    assert.notEqual(r.code, 0, show(r));
    assert.equal(r.stdout, "", show(r));
    assert.match(r.stderr.trim(), /^ascribe: stranger@invites\.test is not a member of account /, show(r));
    assert.ok(!r.stderr.trim().includes("\n"), show(r));
  });

  test("members list --json lists emails and roles", TIMEOUT, async () => {
    const list = await cliJson<{ email: string; role: string; has_password: boolean; joined_at: string }[]>(
      env(),
      ["members", "list", "--account", accountId, "--json"],
    );
    assert.deepEqual(
      list.map((m) => [m.email, m.role, m.has_password]),
      [
        ["admin@invites.test", "admin", false],
        ["boss@invites.test", "owner", false],
        ["rep@invites.test", "member", false],
      ],
    );
  });

  test("members remove refuses the last owner with a one-line message", TIMEOUT, async () => {
    const r = await runCli(env(), [
      "members",
      "remove",
      "--account",
      accountId,
      "--email",
      "boss@invites.test",
    ]);
    assert.notEqual(r.code, 0, show(r));
    assert.equal(r.stdout, "", show(r));
    const message = r.stderr.trim();
    assert.ok(!message.includes("\n"), `expected one line\n${show(r)}`);
    assert.match(message, /last owner/, show(r));
  });
});
