import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { chmod, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { adminSocketPath } from "../../src/admin/admin-socket.ts";
import { DEMO_OWNER } from "../../src/admin/demo.ts";
import { notPrivate, walkModes, withUmask } from "../helpers/file-modes.ts";
import {
  backend,
  type CliResult,
  cliJson,
  freshServiceEnv,
  ROOT,
  runCli,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

/*
 * The real service started under `umask 000` (children inherit the umask of the process that
 * spawns them): DATA_DIR and all it holds stay private, an earlier, wider DATA_DIR is narrowed on
 * start, and another local user's process is refused by the admin socket even once the socket and
 * DATA_DIR were loosened.
 */

const TIMEOUT = { timeout: 400_000 };
/** Starting with the demo's seeding takes long on a loaded machine. */
const START_MS = 180_000;
const BIN = join(ROOT, "bin", "ascribe.js");

/** How to run a command as `nobody` here, or why it cannot be done. */
function asNobody(): { prefix: string[] } | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: "the tests do not run as root, so they cannot switch user" };
  const has = (tool: string) => {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (has("setpriv")) return { prefix: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] };
  if (has("runuser")) return { prefix: ["runuser", "-u", "nobody", "--"] };
  return { reason: "neither setpriv nor runuser is installed" };
}

function runAs(prefix: string[], env: NodeJS.ProcessEnv, args: string[]): Promise<CliResult> {
  const [command = "", ...rest] = prefix;
  return new Promise((resolve) => {
    execFile(
      command,
      [...rest, process.execPath, BIN, ...args],
      { cwd: ROOT, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function assertPrivate(dataDir: string) {
  const entries = await walkModes(dataDir);
  assert.deepEqual(notPrivate(entries), [], "every folder 0700, every file and socket 0600");
  return entries;
}

describe("local security of a service started under umask 000", () => {
  let service: ServiceEnv;
  let serve: ServeProcess;
  let accountId: string;

  before(async () => {
    service = await freshServiceEnv();
    serve = await withUmask(0, () => startServe(service.env, START_MS));
    // The banner: on stdout, or on stderr with LOG_FORMAT=json.
    const banner = `${serve.stdout()}\n${serve.stderr()}`;
    const account = /^ {2}demo account: (\S+)$/m.exec(banner);
    assert.ok(account?.[1], banner);
    accountId = account[1];
  });
  after(async () => {
    await serve?.stop();
    await service?.cleanup();
  });

  test(
    "DATA_DIR, the database, the stored recordings, the keyring and the socket are private",
    TIMEOUT,
    async () => {
      const entries = await assertPrivate(service.dataDir);
      const recordings = entries.filter((e) => e.kind === "file" && e.path.startsWith("files/"));
      assert.ok(recordings.length > 0, "the demo's recordings were stored");
      assert.ok(entries.some((e) => e.path === "secret.key"));
      if (backend === "embedded") {
        assert.ok(entries.filter((e) => e.path.startsWith("pgdata/")).length > 100, "the database's files");
        assert.equal((await stat(adminSocketPath(service.dataDir))).mode & 0o7777, 0o600);
      }
    },
  );

  test(
    "another user's process is refused by the admin socket, even once it could connect",
    TIMEOUT,
    async (t) => {
      if (backend !== "embedded") return t.skip("the admin socket serves the embedded database only");
      const nobody = asNobody();
      if ("reason" in nobody) {
        if (process.env.CI === "true") assert.fail(`cannot run as nobody: ${nobody.reason}`);
        return t.skip(`cannot run as nobody: ${nobody.reason}`);
      }
      // An operator's mistake: DATA_DIR and the socket opened to everyone.
      await chmod(service.dataDir, 0o755);
      await chmod(adminSocketPath(service.dataDir), 0o666);
      try {
        const intruder = await runAs(nobody.prefix, service.env, [
          "keys",
          "create",
          "--account",
          accountId,
          "--as",
          DEMO_OWNER,
          "--name",
          "intruder",
          "--scopes",
          "*",
        ]);
        assert.equal(intruder.code, 1, intruder.stdout + intruder.stderr);
        assert.equal(
          intruder.stderr,
          "ascribe: refused: admin commands are taken only from the user running the server, or root\n",
        );
        assert.equal(intruder.stdout, "");
      } finally {
        await chmod(adminSocketPath(service.dataDir), 0o600);
        await chmod(service.dataDir, 0o700);
      }
      // The server's own user still goes through the socket, and no key was made.
      const keys = await cliJson<{ name: string }[]>(service.env, [
        "keys",
        "list",
        "--account",
        accountId,
        "--json",
      ]);
      assert.deepEqual(
        keys.map((k) => k.name).filter((name) => name === "intruder"),
        [],
      );
      assert.match(`${serve.stdout()}${serve.stderr()}`, /admin socket: refused a command from another user/);
    },
  );

  test("a DATA_DIR left wider by an earlier version is narrowed on start", TIMEOUT, async () => {
    await serve.stop();
    // What an earlier version left under umask 022: folders 0755, files 0644.
    for (const entry of await walkModes(service.dataDir)) {
      if (entry.kind === "symlink" || entry.kind === "socket") continue;
      await chmod(join(service.dataDir, entry.path), entry.kind === "dir" ? 0o755 : 0o644);
    }
    assert.ok(notPrivate(await walkModes(service.dataDir)).length > 3);
    serve = await withUmask(0, () => startServe(service.env, START_MS));
    await assertPrivate(service.dataDir);
    assert.doesNotMatch(`${serve.stdout()}${serve.stderr()}`, /could not be made private/);
  });
});

test("a CLI command that opens DATA_DIR itself under umask 000 keeps it private", TIMEOUT, async () => {
  const service = await freshServiceEnv();
  try {
    const created = await withUmask(0, () =>
      runCli(service.env, ["accounts", "create", "--name", "Umask Co", "--json"]),
    );
    assert.equal(created.code, 0, created.stderr);
    const entries = await assertPrivate(service.dataDir);
    assert.ok(entries.some((e) => e.path === "secret.key"));
    if (backend === "embedded") assert.ok(entries.some((e) => e.path.startsWith("pgdata/")));
  } finally {
    await service.cleanup();
  }
});
