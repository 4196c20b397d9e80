import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  apiGet,
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
 * The required proof: every admin command works while `ascribe serve` runs — on the embedded
 * database too, where the CLI reaches the server's database through DATA_DIR/ascribe.sock.
 */

const KEY_PATTERN = /^svc_sk_live_[A-Za-z0-9_-]{32}$/;
const LIST_FIELDS = [
  "created_at",
  "expires_at",
  "id",
  "last_used_at",
  "name",
  "prefix",
  "revoked_at",
  "scopes",
].sort();
const TIMEOUT = { timeout: 240_000 };
// Every command spawns a process (seconds each on a loaded 2-core machine): a suite's budget is the sum.
const SUITE_TIMEOUT = { timeout: 900_000 };

interface CreatedAccount {
  id: string;
  name: string;
  plan: string;
  client_key: string;
}
interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string;
  scopes: string[];
  expires_at: string | null;
}
interface ListedKey {
  id: string;
  prefix: string;
  name: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

function show(r: CliResult): string {
  return `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

/** A refused command: non-zero exit, one line on stderr, nothing on stdout. */
function assertRefused(r: CliResult, mentions?: RegExp): void {
  assert.notEqual(r.code, 0, show(r));
  assert.equal(r.stdout, "", show(r));
  const message = r.stderr.trim();
  assert.ok(message.length > 0, show(r));
  assert.ok(!message.includes("\n"), `expected a one-line message\n${show(r)}`);
  if (mentions) assert.match(message, mentions, show(r));
}

describe(`the CLI while ascribe serve runs (${backend} database)`, SUITE_TIMEOUT, () => {
  let service: ServiceEnv | undefined;
  let server: ServeProcess | undefined;
  const env = () => {
    if (!service) throw new Error("no service environment");
    return service.env;
  };
  const base = () => {
    if (!server) throw new Error("serve did not start");
    return server.baseUrl;
  };

  before(async () => {
    service = await freshServiceEnv();
    server = await startServe(service.env);
  }, TIMEOUT);

  after(async () => {
    try {
      if (server) {
        const exit = await server.stop();
        assert.deepEqual(exit, { code: 0, signal: null }, `serve stderr: ${server.stderr()}`);
      }
    } finally {
      await service?.cleanup();
    }
  }, TIMEOUT);

  test("the first start prints the site, the API base and a working demo key", TIMEOUT, async () => {
    assert.ok(server);
    assert.match(server.stdout(), /^Ascribe is running$/m);
    assert.match(server.stdout(), /^ {2}site: {5}http:\/\/localhost:\d+$/m);
    assert.match(server.printedBaseUrl, /^http:\/\/localhost:\d+\/api\/v1$/);
    assert.ok(server.demoKey, `no demo key printed:\n${server.stdout()}`);
    assert.match(server.demoKey, KEY_PATTERN);
    const r = await apiGet(base(), "/icp/criteria", server.demoKey);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const data = (r.body as { data: Record<string, unknown> }).data;
    assert.ok(Object.keys(data).length > 0, JSON.stringify(r.body));
  });

  test(
    "the first start names the demo account and prints its owner's one-time sign-in link",
    TIMEOUT,
    async () => {
      assert.ok(server);
      const account = /^ {2}demo account: ([0-9a-f-]{36})$/m.exec(server.stdout())?.[1];
      const link = /^ {2}sign in: {2}(http:\/\/localhost:\d+\/set-password\/[A-Za-z0-9_-]{43})$/m.exec(
        server.stdout(),
      )?.[1];
      assert.ok(account && link, server.stdout());
      const url = new URL(link);
      url.hostname = "127.0.0.1";
      const page = await fetch(url);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /Choose your password/);
      assert.match(html, /value="owner@demo\.ascribe\.local"/);
    },
  );

  test("a second serve on the same DATA_DIR is refused", {
    ...TIMEOUT,
    skip: backend !== "embedded" && "PostgreSQL allows several instances",
  }, async () => {
    const r = await runCli(env(), ["serve"], 60_000);
    assert.notEqual(r.code, 0, show(r));
    assert.ok(r.code !== null, `the second serve kept running\n${show(r)}`);
    assert.match(r.stderr, /another ascribe process is using/, show(r));
    assert.doesNotMatch(r.stdout, /Ascribe is running/, show(r));
    // The first server is unharmed.
    const first = await runCli(env(), ["keys", "list", "--account", "00000000-0000-4000-8000-000000000000"]);
    assert.match(first.stderr, /not found/, show(first));
    assert.ok(server?.demoKey);
    assert.equal((await apiGet(base(), "/icp/criteria", server.demoKey)).status, 200);
  });

  describe("accounts, members and keys", SUITE_TIMEOUT, () => {
    let account: CreatedAccount | undefined;
    let key: CreatedKey | undefined;
    let expiring: CreatedKey | undefined;
    const accountId = () => {
      if (!account) throw new Error("the account was not created");
      return account.id;
    };

    test("accounts create --owner prints the account", TIMEOUT, async () => {
      account = await cliJson<CreatedAccount>(env(), [
        "accounts",
        "create",
        "--name",
        "Acme",
        "--owner",
        "boss@acme.test",
        "--json",
      ]);
      assert.deepEqual(Object.keys(account).sort(), [
        "client_key",
        "id",
        "invite_url",
        "mailed",
        "name",
        "plan",
      ]);
      assert.match(account.id, /^[0-9a-f-]{36}$/);
      assert.equal(account.name, "Acme");
      assert.equal(account.plan, "pro");
      assert.equal(typeof account.client_key, "string");
      assert.ok(account.client_key.length > 0);
    });

    test("accounts webhook-secret creates, then rotates, the signing secret", TIMEOUT, async () => {
      const first = await cliJson<{ account_id: string; secret: string }>(env(), [
        "accounts",
        "webhook-secret",
        "--account",
        accountId(),
        "--json",
      ]);
      assert.deepEqual(Object.keys(first).sort(), ["account_id", "secret"]);
      assert.equal(first.account_id, accountId());
      assert.match(first.secret, /^whsec_[A-Za-z0-9_-]{32}$/);
      const second = await cliJson<{ secret: string }>(env(), [
        "accounts",
        "webhook-secret",
        "--account",
        accountId(),
        "--json",
      ]);
      assert.notEqual(second.secret, first.secret);
    });

    test("members add prints the membership", TIMEOUT, async () => {
      const m = await cliJson<unknown>(env(), [
        "members",
        "add",
        "--account",
        accountId(),
        "--email",
        "rep@acme.test",
        "--role",
        "member",
        "--json",
      ]);
      const { invite_url, ...membership } = m as typeof m & { invite_url: string };
      assert.deepEqual(membership, {
        account_id: accountId(),
        email: "rep@acme.test",
        role: "member",
        mailed: false,
      });
      assert.match(invite_url, /\/set-password\/[A-Za-z0-9_-]{43}$/);
    });

    test("a member may not create keys", TIMEOUT, async () => {
      const r = await runCli(env(), [
        "keys",
        "create",
        "--account",
        accountId(),
        "--as",
        "rep@acme.test",
        "--name",
        "x",
        "--scopes",
        "read:icp",
        "--json",
      ]);
      assertRefused(r, /owner or admin/);
      const list = await cliJson<ListedKey[]>(env(), ["keys", "list", "--account", accountId(), "--json"]);
      assert.deepEqual(list, []);
    });

    test("the owner creates a key that works at once", TIMEOUT, async () => {
      key = await cliJson<CreatedKey>(env(), [
        "keys",
        "create",
        "--account",
        accountId(),
        "--as",
        "boss@acme.test",
        "--name",
        "ci",
        "--scopes",
        "read:icp",
        "--json",
      ]);
      assert.deepEqual(Object.keys(key).sort(), ["expires_at", "id", "key", "name", "prefix", "scopes"]);
      assert.match(key.key, KEY_PATTERN);
      assert.equal(key.prefix, key.key.slice("svc_sk_live_".length, "svc_sk_live_".length + 8));
      assert.equal(key.name, "ci");
      assert.deepEqual(key.scopes, ["read:icp"]);
      assert.equal(key.expires_at, null);
      const r = await apiGet(base(), "/icp/criteria", key.key);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { data: {} });
    });

    test("--expires 90d sets the expiry 90 days ahead", TIMEOUT, async () => {
      const startedAt = Date.now();
      expiring = await cliJson<CreatedKey>(env(), [
        "keys",
        "create",
        "--account",
        accountId(),
        "--as",
        "boss@acme.test",
        "--name",
        "quarterly",
        "--scopes",
        "read:icp",
        "--expires",
        "90d",
        "--json",
      ]);
      assert.ok(expiring.expires_at);
      const expected = startedAt + 90 * 24 * 3600 * 1000;
      const delta = Date.parse(expiring.expires_at) - expected;
      assert.ok(Math.abs(delta) < 60_000, `expires_at ${expiring.expires_at} is ${delta} ms off now+90d`);
      assert.equal((await apiGet(base(), "/icp/criteria", expiring.key)).status, 200);
    });

    test("keys list shows both keys, never the key itself, and last_used_at once used", TIMEOUT, async () => {
      assert.ok(key && expiring);
      const keys = [key, expiring];
      const deadline = Date.now() + 15_000;
      let list: ListedKey[] = [];
      for (;;) {
        const r = await runCli(env(), ["keys", "list", "--account", accountId(), "--json"]);
        assert.equal(r.code, 0, show(r));
        for (const k of keys) assert.ok(!r.stdout.includes(k.key), "keys list printed a full key");
        list = JSON.parse(r.stdout) as ListedKey[];
        // Audit (and last_used_at) is written in batches every 250 ms.
        if (list.every((k) => k.last_used_at !== null) || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.equal(list.length, 2, JSON.stringify(list));
      for (const listed of list) {
        assert.deepEqual(Object.keys(listed).sort(), LIST_FIELDS);
        assert.ok(!("key" in listed));
      }
      assert.deepEqual(list.map((k) => k.id).sort(), keys.map((k) => k.id).sort());
      for (const k of keys) {
        const listed = list.find((l) => l.id === k.id);
        assert.ok(listed);
        assert.equal(listed.prefix, k.prefix);
        assert.equal(listed.name, k.name);
        assert.deepEqual(listed.scopes, ["read:icp"]);
        assert.equal(listed.expires_at, k.expires_at);
        assert.equal(listed.revoked_at, null);
        assert.ok(!Number.isNaN(Date.parse(listed.created_at)));
        assert.ok(listed.last_used_at, `last_used_at still null for ${k.name}: ${JSON.stringify(listed)}`);
        assert.ok(!Number.isNaN(Date.parse(listed.last_used_at)));
      }
    });

    test("keys revoke by prefix: the very next request is refused", TIMEOUT, async () => {
      assert.ok(key);
      const revoked = await cliJson<{ id: string; revoked_at: string }>(env(), [
        "keys",
        "revoke",
        "--account",
        accountId(),
        "--as",
        "boss@acme.test",
        key.prefix,
        "--json",
      ]);
      assert.deepEqual(Object.keys(revoked).sort(), ["id", "revoked_at"]);
      assert.equal(revoked.id, key.id);
      assert.ok(Math.abs(Date.parse(revoked.revoked_at) - Date.now()) < 60_000, revoked.revoked_at);
      const r = await apiGet(base(), "/icp/criteria", key.key);
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { error: "invalid_or_missing_api_key" });
      const list = await cliJson<ListedKey[]>(env(), ["keys", "list", "--account", accountId(), "--json"]);
      assert.equal(list.find((k) => k.id === key?.id)?.revoked_at, revoked.revoked_at);
    });

    test("a member may not revoke keys", TIMEOUT, async () => {
      assert.ok(expiring);
      const r = await runCli(env(), [
        "keys",
        "revoke",
        "--account",
        accountId(),
        "--as",
        "rep@acme.test",
        expiring.prefix,
        "--json",
      ]);
      assertRefused(r, /owner or admin/);
      assert.equal((await apiGet(base(), "/icp/criteria", expiring.key)).status, 200);
    });

    test("set-plan free: keys stop working at once and no key can be created", TIMEOUT, async () => {
      const fresh = await cliJson<CreatedKey>(env(), [
        "keys",
        "create",
        "--account",
        accountId(),
        "--as",
        "boss@acme.test",
        "--name",
        "before-free",
        "--scopes",
        "read:icp",
        "--json",
      ]);
      const changed = await cliJson<unknown>(env(), [
        "accounts",
        "set-plan",
        "--account",
        accountId(),
        "--plan",
        "free",
        "--json",
      ]);
      assert.deepEqual(changed, { id: accountId(), plan: "free" });
      const r = await apiGet(base(), "/icp/criteria", fresh.key);
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.deepEqual(r.body, { error: "plan_free_no_api" });
      const refused = await runCli(env(), [
        "keys",
        "create",
        "--account",
        accountId(),
        "--as",
        "boss@acme.test",
        "--name",
        "on-free",
        "--scopes",
        "read:icp",
        "--json",
      ]);
      assertRefused(refused, /plan_free_no_api|free plan/);
    });
  });

  test("import events and spend from examples/, then again: replays change nothing", TIMEOUT, async () => {
    const demo = await cliJson<{ account_id: string }>(env(), ["demo", "--seed", "11", "--json"]);
    const examples = join(ROOT, "examples");
    const run = (kind: string, file: string) =>
      cliJson<{ imported: number; updated: number; skipped: number; errors: unknown[] }>(env(), [
        "import",
        kind,
        "--account",
        demo.account_id,
        join(examples, file),
        "--json",
      ]);
    assert.deepEqual(await run("spend", "spend.csv"), { imported: 3, updated: 0, skipped: 0, errors: [] });
    assert.deepEqual(await run("events", "events.jsonl"), {
      imported: 5,
      updated: 0,
      skipped: 0,
      errors: [],
    });
    assert.deepEqual(await run("events", "events.jsonl"), {
      imported: 0,
      updated: 0,
      skipped: 5,
      errors: [],
    });
    assertRefused(
      await runCli(env(), [
        "import",
        "widgets",
        "--account",
        demo.account_id,
        join(examples, "spend.csv"),
        "--json",
      ]),
      /unknown kind widgets/,
    );
  });

  test("connectors add, a signed Stripe delivery to its URL, list, test, remove", TIMEOUT, async () => {
    const shop = await cliJson<CreatedAccount>(env(), ["accounts", "create", "--name", "Shop", "--json"]);
    const secret = "whsec_clitest0123456789";
    const added = await cliJson<{ id: string; kind: string; webhook_url: string; secret: string }>(env(), [
      "connectors",
      "add",
      "--account",
      shop.id,
      "--kind",
      "stripe",
      "--secret",
      secret,
      "--json",
    ]);
    assert.deepEqual(Object.keys(added).sort(), ["id", "kind", "secret", "webhook_url"]);
    assert.equal(added.kind, "stripe");
    assert.equal(added.secret, secret);
    assert.match(added.webhook_url, new RegExp(`/api/hooks/stripe/${added.id}$`));

    const { default: Stripe } = await import("stripe");
    const { checkoutCompleted } = await import("../connectors/stripe-fixtures.ts");
    const payload = JSON.stringify(checkoutCompleted);
    const site = base().replace(/\/api\/v1$/, "");
    const delivered = await fetch(`${site}/api/hooks/stripe/${added.id}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret }),
      },
      body: payload,
    });
    assert.equal(delivered.status, 200, await delivered.clone().text());
    assert.equal(((await delivered.json()) as { data: { outcome: string } }).data.outcome, "stored");

    const listed = await runCli(env(), ["connectors", "list", "--account", shop.id, "--json"]);
    assert.equal(listed.code, 0, show(listed));
    assert.ok(!listed.stdout.includes(secret), "list never prints the secret");
    const [row] = JSON.parse(listed.stdout) as { id: string; last_event_at: string | null }[];
    assert.equal(row?.id, added.id);
    assert.ok(row?.last_event_at, listed.stdout);
    const tested = await cliJson<{ ok: boolean; secret: string }>(env(), [
      "connectors",
      "test",
      "--account",
      shop.id,
      "--id",
      added.id,
      "--json",
    ]);
    assert.deepEqual([tested.ok, tested.secret], [true, "ok"]);
    await cliJson(env(), ["connectors", "remove", "--account", shop.id, "--id", added.id, "--json"]);
    assert.deepEqual(await cliJson(env(), ["connectors", "list", "--account", shop.id, "--json"]), []);
    assertRefused(
      await runCli(env(), ["connectors", "add", "--account", shop.id, "--kind", "stripe", "--json"]),
      /--secret/,
    );
  });

  let demoAccount: { account_id: string; key: string } | null = null;

  test("demo --seed 7 creates an account whose key reads its ICP", TIMEOUT, async () => {
    const demo = await cliJson<{ account_id: string; client_key: string; key: string }>(env(), [
      "demo",
      "--seed",
      "7",
      "--json",
    ]);
    assert.deepEqual(Object.keys(demo).sort(), ["account_id", "client_key", "key"]);
    assert.match(demo.key, KEY_PATTERN);
    const r = await apiGet(base(), "/icp/criteria", demo.key);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const data = (r.body as { data: unknown }).data;
    assert.ok(data && typeof data === "object" && Object.keys(data).length > 0, JSON.stringify(r.body));
    demoAccount = demo;
  });

  test(
    "rules run --account evaluates that account's enabled rules and prints each run",
    TIMEOUT,
    async () => {
      assert.ok(demoAccount, "the demo test ran first");
      const r = await runCli(env(), ["rules", "run", "--account", demoAccount.account_id, "--json"]);
      const runs = JSON.parse(r.stdout) as {
        rule_id: string;
        run_id: string;
        dry_run: boolean;
        status: string;
        actions: unknown[];
      }[];
      // The demo arms one rule and this server has no Meta token: its actions fail, recorded, and
      // the command exits 2 (done in part) with one line on stderr.
      assert.equal(r.code, 2, show(r));
      assert.deepEqual(
        runs.filter((run) => run.status === "error").map((run) => run.dry_run),
        [false],
      );
      assert.match(r.stderr, /^ascribe: 1 of \d+ rule runs failed .*\n$/);
      const listed = await apiGet(base(), "/ads/rules", demoAccount.key);
      const enabled = (listed.body as { data: { id: string; enabled: boolean }[] }).data
        .filter((rule) => rule.enabled)
        .map((rule) => rule.id);
      assert.ok(enabled.length > 0);
      assert.deepEqual(runs.map((run) => run.rule_id).sort(), [...enabled].sort());
      for (const run of runs) {
        assert.match(run.run_id, /^[0-9a-f-]{36}$/);
        assert.ok(Array.isArray(run.actions));
        const latest = await apiGet(
          base(),
          `/ads/rules/runs?rule_id=${run.rule_id}&limit=1`,
          demoAccount.key,
        );
        assert.equal((latest.body as { data: { id: string }[] }).data[0]?.id, run.run_id);
      }
    },
  );

  test("bad arguments exit non-zero with one line on stderr and nothing on stdout", TIMEOUT, async () => {
    assertRefused(
      await runCli(env(), ["accounts", "create", "--name", "X", "--plan", "gold", "--json"]),
      /gold/,
    );
    assertRefused(await runCli(env(), ["accounts", "create", "--plan", "pro", "--json"]), /--name/);
    assertRefused(
      await runCli(env(), ["accounts", "create", "--name", "X", "--currency", "euro", "--json"]),
      /--currency/,
    );
    assertRefused(
      await runCli(env(), ["accounts", "set-plan", "--account", "not-a-uuid", "--plan", "pro", "--json"]),
      /--account/,
    );
    assertRefused(
      await runCli(env(), [
        "accounts",
        "set-plan",
        "--account",
        "00000000-0000-4000-8000-000000000000",
        "--plan",
        "pro",
        "--json",
      ]),
      /not found/,
    );
  });
});
