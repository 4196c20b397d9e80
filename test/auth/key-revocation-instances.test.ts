import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  apiGet,
  backend,
  cliJson,
  freshServiceEnv,
  runCli,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

/*
 * Keys are cached in every serving process. Two instances serve one PostgreSQL database; a key
 * revoked through one instance's admin socket, or by the CLI straight on the database, answers 401
 * on its very next request at either instance — the first request after the command returns, no
 * waiting, no retry.
 */

const TIMEOUT = { timeout: 180_000 };
const OWNER = "owner@demo.ascribe.local";

interface CreatedKey {
  key: string;
  prefix: string;
}

describe("revocation across instances (PostgreSQL)", {
  ...TIMEOUT,
  skip: backend !== "postgres" && "one embedded database serves one process",
}, () => {
  let service: ServiceEnv;
  let first: ServeProcess;
  let second: ServeProcess;
  let secondDir: string;
  let directDir: string;
  let accountId: string;

  before(async () => {
    service = await freshServiceEnv();
    first = await startServe(service.env);
    accountId = /^ {2}demo account: ([0-9a-f-]{36})$/m.exec(first.stdout())?.[1] ?? "";
    assert.ok(accountId, first.stdout());
    secondDir = await mkdtemp(join(tmpdir(), "ascribe-second-"));
    directDir = await mkdtemp(join(tmpdir(), "ascribe-direct-"));
    second = await startServe({ ...service.env, DATA_DIR: secondDir });
  }, TIMEOUT);

  after(async () => {
    try {
      await Promise.all([first?.stop(), second?.stop()]);
    } finally {
      await rm(secondDir, { recursive: true, force: true });
      await rm(directDir, { recursive: true, force: true });
      await service?.cleanup();
    }
  }, TIMEOUT);

  /** A key made through the first instance's socket, then used at both instances (cached there). */
  async function usedKey(name: string): Promise<CreatedKey> {
    const created = await cliJson<CreatedKey>(service.env, [
      "keys",
      "create",
      ...["--account", accountId, "--as", OWNER, "--name", name, "--scopes", "read:icp", "--json"],
    ]);
    for (const server of [first, second, first, second]) {
      assert.equal((await apiGet(server.baseUrl, "/icp/criteria", created.key)).status, 200);
    }
    return created;
  }

  async function revoke(env: NodeJS.ProcessEnv, key: CreatedKey): Promise<void> {
    const r = await runCli(env, ["keys", "revoke", key.prefix, "--account", accountId, "--as", OWNER]);
    assert.equal(r.code, 0, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }

  test("revoked through the first instance's admin socket: 401 at the other at once", TIMEOUT, async () => {
    const key = await usedKey("socket");
    await revoke(service.env, key);
    assert.equal((await apiGet(second.baseUrl, "/icp/criteria", key.key)).status, 401);
    assert.equal((await apiGet(first.baseUrl, "/icp/criteria", key.key)).status, 401);
  });

  test(
    "revoked by the CLI on the database (no server in its DATA_DIR): 401 at both at once",
    TIMEOUT,
    async () => {
      const key = await usedKey("direct");
      await revoke({ ...service.env, DATA_DIR: directDir }, key);
      assert.equal((await apiGet(first.baseUrl, "/icp/criteria", key.key)).status, 401);
      assert.equal((await apiGet(second.baseUrl, "/icp/criteria", key.key)).status, 401);
    },
  );

  test("a key that was never revoked keeps answering at both", TIMEOUT, async () => {
    const key = await usedKey("kept");
    assert.equal((await apiGet(first.baseUrl, "/icp/criteria", key.key)).status, 200);
    assert.equal((await apiGet(second.baseUrl, "/icp/criteria", key.key)).status, 200);
  });
});
