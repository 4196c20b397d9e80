import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type FakeSpendVendors,
  generatedRows,
  startFakeSpendVendors,
} from "../helpers/fake-spend-vendors.ts";
import {
  apiGet,
  backend,
  type CliResult,
  cliJson,
  freshServiceEnv,
  runCli,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

const TIMEOUT = { timeout: 240_000 };
const show = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

/*
 * `ascribe connectors add --kind meta|google`, `ascribe spend sync` and the SPEND_SYNC_INTERVAL_SECONDS
 * schedule, end to end: the CLI asks the running server, which fetches from a loopback Meta / Google.
 */
describe(`spend sync from the CLI while ascribe serve runs (${backend} database)`, {
  timeout: 600_000,
}, () => {
  let vendors: FakeSpendVendors;
  let service: ServiceEnv | undefined;
  let server: ServeProcess | undefined;
  const env = () => {
    if (!service) throw new Error("no service environment");
    return service.env;
  };

  before(async () => {
    vendors = await startFakeSpendVendors();
    service = await freshServiceEnv();
    Object.assign(service.env, {
      META_API_URL: vendors.metaApiUrl,
      GOOGLE_ADS_API_URL: vendors.googleAdsApiUrl,
      GOOGLE_OAUTH_TOKEN_URL: vendors.googleTokenUrl,
      SPEND_SYNC_INTERVAL_SECONDS: "1",
    });
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
      await vendors.close();
    }
  }, TIMEOUT);

  test(
    "connectors add --kind meta, spend sync, /ads/spend; an expired token is a one-line error",
    TIMEOUT,
    async () => {
      const owner = "owner@spend.test";
      const shop = await cliJson<{ id: string }>(env(), [
        "accounts",
        "create",
        "--name",
        "Spend",
        "--owner",
        owner,
        "--json",
      ]);
      vendors.meta.set("4242", generatedRows(2, daysAgo(1), 2));
      const token = vendors.metaToken;
      const added = await cliJson<{ id: string; kind: string; webhook_url: null; secret: null }>(env(), [
        "connectors",
        "add",
        "--account",
        shop.id,
        "--kind",
        "meta",
        "--ad-account-id",
        "act_4242",
        "--access-token",
        token,
        "--json",
      ]);
      assert.deepEqual(added, { id: added.id, kind: "meta", webhook_url: null, secret: null });

      const synced = await runCli(env(), [
        "spend",
        "sync",
        "--account",
        shop.id,
        "--platform",
        "meta",
        "--since",
        daysAgo(3),
      ]);
      assert.equal(synced.code, 0, show(synced));
      assert.match(synced.stdout, /^meta: 4 rows written$/m, show(synced));

      const listed = await runCli(env(), ["connectors", "list", "--account", shop.id, "--json"]);
      assert.ok(!listed.stdout.includes(token), "list never prints the token");
      const key = await cliJson<{ key: string }>(env(), [
        "keys",
        "create",
        "--account",
        shop.id,
        "--as",
        owner,
        "--name",
        "ads",
        "--scopes",
        "read:ads",
        "--json",
      ]);
      const spend = await apiGet(
        server?.baseUrl ?? "",
        `/ads/spend?from=${daysAgo(3)}&to=${today()}`,
        key.key,
      );
      assert.equal(spend.status, 200);
      // Ad 1 over two days: 0.02·1 + 0.02·2 units.
      const rows = (spend.body as { data: { ad_id: string; total_spend: number }[] }).data;
      assert.deepEqual(
        rows.map((r) => [r.ad_id, r.total_spend]),
        [
          ["23850000001", 0.06],
          ["23850000000", 0.03],
        ],
      );

      // Every page from now on (the schedule syncs every second too): the token has expired.
      vendors.metaExpireAtPage = vendors.metaPagesServed + 1;
      const refused = await runCli(env(), ["spend", "sync", "--account", shop.id, "--platform", "meta"]);
      vendors.metaExpireAtPage = null;
      assert.notEqual(refused.code, 0, show(refused));
      assert.match(
        refused.stderr.trim(),
        /^[^\n]*Meta refused the access token \(OAuthException 190[^\n]*$/,
        show(refused),
      );

      const wrong = await runCli(env(), [
        "connectors",
        "add",
        "--account",
        shop.id,
        "--kind",
        "google",
        "--customer-id",
        "1",
      ]);
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stderr, /--developer-token is required for --kind google/, show(wrong));
    },
  );

  test("the schedule inside serve syncs a google connector by itself", TIMEOUT, async () => {
    const shop = await cliJson<{ id: string }>(env(), ["accounts", "create", "--name", "Sched", "--json"]);
    vendors.google.set("9876543210", generatedRows(1, today(), 1));
    const added = await cliJson<{ id: string }>(env(), [
      "connectors",
      "add",
      "--account",
      shop.id,
      "--kind",
      "google",
      "--customer-id",
      "987-654-3210",
      "--developer-token",
      "devtoken-xyz789",
      "--client-id",
      "42-abc.apps.googleusercontent.com",
      "--client-secret",
      "GOCSPX-shh",
      "--refresh-token",
      "1//sched-refresh",
      "--json",
    ]);
    let state: { id: string; last_sync_at: string | null; last_error: string | null } | undefined;
    for (let i = 0; i < 60 && !state?.last_sync_at; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      [state] = await cliJson<NonNullable<typeof state>[]>(env(), [
        "connectors",
        "list",
        "--account",
        shop.id,
        "--json",
      ]);
    }
    assert.equal(state?.id, added.id);
    assert.ok(state?.last_sync_at, `never synced: ${JSON.stringify(state)}\n${server?.stderr()}`);
    assert.equal(state?.last_error, null);
  });
});
