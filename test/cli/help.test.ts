import assert from "node:assert/strict";
import { test } from "node:test";
import type { Command } from "commander";
import { IMPORT_KINDS } from "../../src/cli/data-commands.ts";
import { buildCli } from "../../src/cli/main.ts";
import { importKinds } from "../../src/import/kinds.ts";

/** Every command under `command`, itself included, with its path. */
function walk(command: Command, path: string[] = []): { path: string; command: Command }[] {
  return [
    { path: path.join(" ") || "ascribe", command },
    ...command.commands.flatMap((sub) => walk(sub, [...path, sub.name()])),
  ];
}

test("every command, option and argument has --help text", () => {
  const missing: string[] = [];
  const all = walk(buildCli());
  for (const { path, command } of all) {
    if (!command.description().trim()) missing.push(`${path}: no description`);
    for (const option of command.options) {
      if (!option.description.trim()) missing.push(`${path} ${option.flags}: no description`);
    }
    for (const argument of command.registeredArguments) {
      if (!argument.description.trim()) missing.push(`${path} <${argument.name()}>: no description`);
    }
  }
  assert.deepEqual(missing, []);
  // The walk reached the commands this issue added, not only the top level.
  const paths = all.map((c) => c.path);
  for (const expected of [
    "accounts list",
    "domains list",
    "domains remove",
    "members list",
    "members remove",
  ]) {
    assert.ok(paths.includes(expected), `no ${expected} in ${paths.join(", ")}`);
  }
});

test("the help lists the kinds import takes, the importers' own names", () => {
  assert.deepEqual([...IMPORT_KINDS].sort(), Object.keys(importKinds).sort());
});
