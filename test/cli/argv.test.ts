import assert from "node:assert/strict";
import { test } from "node:test";
import type { Command } from "commander";
import { buildCli } from "../../src/cli/main.ts";

function subcommand(program: Command, path: string[]): Command {
  let at = program;
  for (const name of path) {
    const next = at.commands.find((c) => c.name() === name);
    assert.ok(next, `no command ${path.join(" ")}`);
    at = next;
  }
  return at;
}

test("keys revoke takes a prefix that begins with a dash as the key, wherever it stands", async () => {
  for (const argv of [
    ["keys", "revoke", "--account", "A", "--as", "boss@acme.test", "-RcyWdVM", "--json"],
    ["keys", "revoke", "-RcyWdVM", "--account", "A", "--as", "boss@acme.test"],
    ["keys", "revoke", "--account", "A", "--as", "boss@acme.test", "--", "-RcyWdVM"],
  ]) {
    const program = buildCli().exitOverride();
    const seen: string[] = [];
    subcommand(program, ["keys", "revoke"])
      .exitOverride()
      .action((key: string, o: { account: string; as: string }) => {
        seen.push(key, o.account, o.as);
      });
    await program.parseAsync(argv, { from: "user" });
    assert.deepEqual(seen, ["-RcyWdVM", "A", "boss@acme.test"], argv.join(" "));
  }
});
