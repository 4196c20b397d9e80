import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  backend,
  type CliResult,
  cliJson,
  freshServiceEnv,
  runCli,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

/*
 * Issue 19, item 17: the commands added for operators, partial failures that exit 2, the free plan's
 * refusal by its spec name, and a command carried out by the running server naming the settings
 * the caller set otherwise. Run while `ascribe serve` holds the data, as operators run them.
 */

const TIMEOUT = { timeout: 180_000 };
const SUITE_TIMEOUT = { timeout: 900_000 };

function show(r: CliResult): string {
  return `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

describe(`operators' commands while ascribe serve runs (${backend} database)`, SUITE_TIMEOUT, () => {
  let service: ServiceEnv | undefined;
  let server: ServeProcess | undefined;
  const env = () => {
    if (!service) throw new Error("no service environment");
    return service.env;
  };

  before(async () => {
    service = await freshServiceEnv();
    server = await startServe(service.env, 150_000);
  }, TIMEOUT);

  after(async () => {
    await server?.stop();
    await service?.cleanup();
  }, TIMEOUT);

  const createAccount = (name: string, plan: string) =>
    cliJson<{ id: string }>(env(), [
      "accounts",
      "create",
      "--name",
      name,
      "--plan",
      plan,
      "--timezone",
      "Europe/Paris",
      "--currency",
      "USD",
      "--owner",
      `owner@${plan}.example.com`,
      "--json",
    ]);

  test(
    "keys create on the free plan: one line naming plan_free_no_api, nothing on stdout",
    TIMEOUT,
    async () => {
      const free = await createAccount("Free Co", "free");
      const r = await runCli(env(), [
        "keys",
        "create",
        "--account",
        free.id,
        "--as",
        "owner@free.example.com",
        "--name",
        "n",
        "--scopes",
        "*",
        "--json",
      ]);
      assert.equal(r.code, 1, show(r));
      assert.equal(r.stdout, "", show(r));
      assert.equal(r.stderr, "ascribe: the free plan has no API access (plan_free_no_api)\n");
    },
  );

  test(
    "accounts list --json: each account's id, name, plan, timezone, currency and creation",
    TIMEOUT,
    async () => {
      const created = await createAccount("Listed Co", "business");
      const listed = await cliJson<Record<string, string>[]>(env(), ["accounts", "list", "--json"]);
      const ours = listed.find((a) => a.id === created.id);
      assert.ok(ours, JSON.stringify(listed));
      const { created_at, ...rest } = ours;
      assert.deepEqual(rest, {
        id: created.id,
        name: "Listed Co",
        plan: "business",
        timezone: "Europe/Paris",
        currency: "USD",
      });
      assert.match(String(created_at), /^\d{4}-\d\d-\d\dT/);
      const human = await runCli(env(), ["accounts", "list"]);
      assert.equal(human.code, 0, show(human));
      assert.match(human.stdout, /^ID +NAME +PLAN +TIMEZONE +CURRENCY +CREATED$/m);
      assert.match(
        human.stdout,
        new RegExp(`^${created.id} +Listed Co +business +Europe/Paris +USD +\\d{4}-`, "m"),
      );
    },
  );

  test("domains add, list and remove", TIMEOUT, async () => {
    const account = await createAccount("Hosts Co", "pro");
    await cliJson(env(), ["domains", "add", "--account", account.id, "--host", "track.hosts.test", "--json"]);
    const listed = await cliJson<{ host: string }[]>(env(), [
      "domains",
      "list",
      "--account",
      account.id,
      "--json",
    ]);
    assert.deepEqual(
      listed.map((d) => d.host),
      ["track.hosts.test"],
    );
    const removed = await cliJson(env(), [
      "domains",
      "remove",
      "--account",
      account.id,
      "--host",
      "track.hosts.test",
      "--json",
    ]);
    assert.deepEqual(removed, { account_id: account.id, host: "track.hosts.test", removed: true });
    const again = await runCli(env(), [
      "domains",
      "remove",
      "--account",
      account.id,
      "--host",
      "track.hosts.test",
    ]);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /^ascribe: track\.hosts\.test is not a host of account .* \(not_found\)\n$/);
    const empty = await runCli(env(), ["domains", "list", "--account", account.id]);
    assert.equal(empty.stdout, "no tracking hosts\n", show(empty));
  });

  test("an import with a bad line: the report on stdout, one line on stderr, exit 2", TIMEOUT, async () => {
    assert.ok(service);
    const account = await createAccount("Import Co", "pro");
    const file = join(service.dataDir, "partly-bad.jsonl");
    await writeFile(
      file,
      [
        JSON.stringify({
          id: "cli-1",
          event_type: "lead",
          event_datetime: "2026-03-02T09:14:00+01:00",
          contact_email: "ann@import.test",
        }),
        JSON.stringify({ id: "cli-2", event_type: "lead", event_datetime: "not a date" }),
        "",
      ].join("\n"),
    );
    const r = await runCli(env(), ["import", "events", "--account", account.id, file, "--json"]);
    assert.equal(r.code, 2, show(r));
    const report = JSON.parse(r.stdout) as { imported: number; errors: { line: number }[] };
    assert.equal(report.imported, 1, show(r));
    assert.deepEqual(
      report.errors.map((e) => e.line),
      [2],
    );
    assert.equal(r.stderr, "ascribe: 1 line was refused; the others landed\n");
  });

  test(
    "rules run with a failed run exits 2; AD_NETWORK set otherwise than the server's is named",
    TIMEOUT,
    async () => {
      assert.ok(service);
      const account = await createAccount("Rules Co", "pro");
      const file = join(service.dataDir, "rules.jsonl");
      await writeFile(
        file,
        `${JSON.stringify({
          id: "5b0c2a1e-8d7f-4e6a-9b3c-2d1e0f9a8b7c",
          label: "A rule of a type this version does not know",
          rule_type: "no_such_rule",
          enabled: true,
          dry_run: true,
        })}\n`,
      );
      await cliJson(env(), ["import", "rules", "--account", account.id, file, "--json"]);

      // The server runs with AD_NETWORK unset (meta); the caller asks for the fake network.
      const r = await runCli({ ...env(), AD_NETWORK: "fake" }, [
        "rules",
        "run",
        "--account",
        account.id,
        "--json",
      ]);
      assert.equal(r.code, 2, show(r));
      const runs = JSON.parse(r.stdout) as { rule_id: string; status: string }[];
      assert.deepEqual(
        runs.map((run) => [run.rule_id, run.status]),
        [["5b0c2a1e-8d7f-4e6a-9b3c-2d1e0f9a8b7c", "error"]],
      );
      const lines = r.stderr.trimEnd().split("\n");
      assert.ok(
        lines.includes("ascribe: 1 of 1 rule runs failed (their actions say why; retried next run)"),
        show(r),
      );
      const named =
        "ascribe: carried out by the running server with its own settings: AD_NETWORK=meta (yours: fake); set them in the server's environment to change them";
      if (backend === "embedded") {
        // The server holds the embedded database: it ran the command, with its own network.
        assert.deepEqual(lines.sort(), [named, lines.find((l) => l.includes("rule runs failed"))].sort());
      } else {
        // On PostgreSQL the CLI runs the command itself, with the caller's settings: nothing to name.
        assert.equal(lines.length, 1, show(r));
      }
    },
  );
});
