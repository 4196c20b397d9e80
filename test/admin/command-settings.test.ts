import assert from "node:assert/strict";
import { test } from "node:test";
import { describeDifferences, differingSettings, settingValues } from "../../src/admin/command-settings.ts";
import { loadConfig } from "../../src/config.ts";

const server = loadConfig({
  DATA_DIR: "/srv/ascribe",
  META_ACCESS_TOKEN: "server-token",
  SITE_URL: "https://ascribe.example.com",
});

test("the server's values: a secret as a fingerprint, never itself; only what the command uses", () => {
  const used = settingValues(server, "rules.run");
  assert.deepEqual(Object.keys(used).sort(), ["AD_NETWORK", "META_ACCESS_TOKEN", "META_API_URL"]);
  assert.equal(used.AD_NETWORK, "meta");
  assert.match(String(used.META_ACCESS_TOKEN), /^sha256:[0-9a-f]{12}$/);
  assert.ok(!JSON.stringify(used).includes("server-token"));
  assert.deepEqual(settingValues(server, "keys.list"), {});
});

test("a setting the caller set otherwise is named with the value used; one left unset is not", () => {
  const caller = loadConfig({ DATA_DIR: "/srv/ascribe", AD_NETWORK: "fake" });
  const differences = differingSettings(caller, "rules.run", settingValues(server, "rules.run"));
  // META_ACCESS_TOKEN differs too, but this caller left it unset: the instance's to decide.
  assert.deepEqual(differences, [{ name: "AD_NETWORK", used: "meta", yours: "fake" }]);
  assert.equal(
    describeDifferences(differences),
    "carried out by the running server with its own settings: AD_NETWORK=meta (yours: fake); set them in the server's environment to change them",
  );
});

test("a secret set differently is named without either value", () => {
  const caller = loadConfig({ META_ACCESS_TOKEN: "my-token", AD_NETWORK: "meta" });
  const differences = differingSettings(caller, "rules.run", settingValues(server, "rules.run"));
  assert.deepEqual(
    differences.map((d) => d.name),
    ["META_ACCESS_TOKEN"],
  );
  const line = describeDifferences(differences);
  assert.ok(!line.includes("my-token") && !line.includes("server-token"), line);
  assert.match(line, /META_ACCESS_TOKEN \(the server's, not yours; values not shown\)/);
});

test("the same values set on both sides, or a command that uses none: nothing to say", () => {
  const same = loadConfig({ META_ACCESS_TOKEN: "server-token", AD_NETWORK: "meta" });
  assert.deepEqual(differingSettings(same, "rules.run", settingValues(server, "rules.run")), []);
  const other = loadConfig({ AD_NETWORK: "fake" });
  assert.deepEqual(differingSettings(other, "keys.list", settingValues(server, "keys.list")), []);
});

test("invitations: SITE_URL set by the caller against the address the server's links use", () => {
  const caller = loadConfig({ SITE_URL: "http://localhost:3000" });
  const used = settingValues(server, "members.add", "https://ascribe.example.com");
  assert.deepEqual(differingSettings(caller, "members.add", used), [
    { name: "SITE_URL", used: "https://ascribe.example.com", yours: "http://localhost:3000" },
  ]);
});
