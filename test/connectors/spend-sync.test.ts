import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sql } from "drizzle-orm";
import { addConnector, listConnectors, testConnector } from "../../src/admin/connectors.ts";
import { DEFAULT_SPEND_HTTP, type SpendHttp } from "../../src/connectors/spend-http.ts";
import { type SpendSyncDeps, syncSpend } from "../../src/connectors/spend-sync.ts";
import { rows } from "../../src/db/client.ts";
import {
  type FakeSpendVendors,
  generatedRows,
  startFakeSpendVendors,
  type VendorRow,
} from "../helpers/fake-spend-vendors.ts";
import { seedAccount, TEST_SITE_URL, testSecrets, useTestApp } from "../helpers/harness.ts";

const now = new Date("2026-03-03T12:00:00Z");
const env = useTestApp({ clock: () => now });
let vendors: FakeSpendVendors;
before(async () => {
  vendors = await startFakeSpendVendors();
});
after(async () => {
  await vendors.close();
});

/** The waits the sync asked for, instead of waiting them. */
let slept: number[] = [];
const http: SpendHttp = {
  ...DEFAULT_SPEND_HTTP,
  sleep: async (ms) => {
    slept.push(ms);
  },
};
const deps = (): SpendSyncDeps => ({
  db: env.db,
  secrets: testSecrets,
  apis: {
    metaApiUrl: vendors.metaApiUrl,
    googleAdsApiUrl: vendors.googleAdsApiUrl,
    googleTokenUrl: vendors.googleTokenUrl,
  },
  http,
  clock: () => now,
});

/** Ad 0's row of one day. */
function oneRow(day: string): VendorRow {
  const [r] = generatedRows(1, day, 1);
  if (!r) throw new Error("generatedRows answered none");
  return r;
}

let adAccounts = 100;
async function metaAccount(rowsOfVendor: VendorRow[]) {
  const account = await seedAccount(env.db);
  adAccounts += 1;
  const adAccountId = `77${adAccounts}`;
  vendors.meta.set(adAccountId, rowsOfVendor);
  const c = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
    account: account.accountId,
    kind: "meta",
    adAccountId: `act_${adAccountId}`,
    accessToken: vendors.metaToken,
  });
  return { account, connector: c.id, adAccountId };
}

async function spendOf(key: string) {
  const r = await env.get(key, "/ads/spend?from=2026-03-01&to=2026-03-03");
  assert.equal(r.status, 200);
  return (r.body as { data: Record<string, unknown>[] }).data;
}

async function stored(accountId: string) {
  return env.db.admin(accountId, (tx) =>
    rows<{ ad_id: string; day: string; spend: number }>(
      tx,
      sql`select ad_id, spend_date::text as day, spend::float8 as spend from ad_spend_daily
          where account_id = ${accountId} order by spend_date, ad_id`,
    ),
  );
}

async function connectorState(accountId: string) {
  const [c] = await listConnectors(env.db, TEST_SITE_URL, { account: accountId });
  return c;
}

test("meta: every page of insights lands in /ads/spend; the token never leaves the server", async () => {
  vendors.metaPageSize = 4;
  const { account, connector } = await metaAccount(generatedRows(3, "2026-03-01", 3));
  const before = vendors.requests.length;
  const r = await syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-01" });
  assert.deepEqual(r, {
    platform: "meta",
    rows_written: 9,
    connectors: [{ connector, from: "2026-03-01", to: "2026-03-03", rows_written: 9, rows_deleted: 0 }],
  });
  const pages = vendors.requests.slice(before);
  assert.equal(pages.length, 3, "9 rows at 4 a page: 3 pages, followed by the after cursor");
  assert.ok(pages.every((p) => p.headers.authorization === `Bearer ${vendors.metaToken}`));

  const key = await account.key(["read:ads"]);
  const data = await spendOf(key);
  // Ad 0: spend 0.01·(1+2+3), clicks 0+1+2, impressions 100 a day, reach 80 a day.
  const ad0 = data.find((d) => d.ad_id === "23850000000");
  assert.deepEqual(ad0, {
    ad_id: "23850000000",
    ad_name: "Ad 0",
    adset_id: "23840000000",
    adset_name: "Set 0",
    campaign_id: "23830000000",
    campaign_name: "Campaign 0",
    platform: "meta",
    total_spend: 0.06,
    total_clicks: 3,
    total_impressions: 300,
    total_reach: 240,
  });
  assert.equal(data.length, 3);
  const state = await connectorState(account.accountId);
  assert.equal(state?.last_sync_at, "2026-03-03T12:00:00.000Z");
  // `connectors test`: the sealed credentials open with this instance's keys, and nothing failed since.
  const tested = await testConnector(env.db, testSecrets, { account: account.accountId, id: connector });
  assert.deepEqual([tested.ok, tested.secret, tested.last_error], [true, "ok", null]);
  assert.equal(state?.last_error, null);
  assert.ok(
    !JSON.stringify(await listConnectors(env.db, TEST_SITE_URL, { account: account.accountId })).includes(
      vendors.metaToken,
    ),
  );
});

test("meta: a 429 with Retry-After and a code-17 limit are waited out, then the sync succeeds", async () => {
  vendors.metaPageSize = 500;
  const { account } = await metaAccount(generatedRows(2, "2026-03-02", 1));
  slept = [];
  vendors.metaScript.push(
    {
      status: 429,
      headers: { "retry-after": "3" },
      body: { error: { message: "Too many calls", type: "OAuthException", code: 4, error_subcode: 1504022 } },
    },
    {
      status: 400,
      headers: {
        "x-business-use-case-usage": JSON.stringify({
          "1234": [
            {
              type: "ads_insights",
              call_count: 100,
              total_cputime: 40,
              total_time: 60,
              estimated_time_to_regain_access: 1,
            },
          ],
        }),
      },
      body: {
        error: {
          message: "User request limit reached",
          type: "OAuthException",
          code: 17,
          error_subcode: 2446079,
        },
      },
    },
  );
  const r = await syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-01" });
  assert.equal(r.rows_written, 2);
  assert.deepEqual(slept, [3_000, 60_000], "Retry-After's 3 s, then the use case's 1 minute");
  assert.equal((await stored(account.accountId)).length, 2);
});

test("meta: a token expiring on the second page stores nothing and says so on the connector", async () => {
  vendors.metaPageSize = 2;
  const { account, adAccountId } = await metaAccount(generatedRows(2, "2026-03-01", 2));
  await syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-01" });
  const first = await stored(account.accountId);
  const synced = (await connectorState(account.accountId))?.last_sync_at;
  // The vendor's figures change, but the token expires before the second page is read.
  vendors.meta.set(
    adAccountId,
    generatedRows(2, "2026-03-01", 2).map((r) => ({ ...r, spend_micros: 990_000 })),
  );
  vendors.metaExpireAtPage = vendors.metaPagesServed + 2;
  try {
    await assert.rejects(
      syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-01" }),
      /Meta refused the access token \(OAuthException 190: Error validating access token.*add the connector again/,
    );
  } finally {
    vendors.metaExpireAtPage = null;
  }
  assert.deepEqual(await stored(account.accountId), first, "not one day half-replaced");
  const state = await connectorState(account.accountId);
  assert.match(state?.last_error ?? "", /^Meta refused the access token \(OAuthException 190/);
  assert.equal(state?.last_sync_at, synced);
});

test("re-syncing a day replaces it; other days and other ad accounts' rows stay", async () => {
  vendors.metaPageSize = 500;
  const { account, adAccountId } = await metaAccount(generatedRows(2, "2026-03-01", 2));
  await syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-01" });
  // A second Meta ad account of the same Ascribe account, its own ads.
  vendors.meta.set("5550001", [{ ...oneRow("2026-03-02"), ad_id: "999", spend_micros: 5_000_000 }]);
  await addConnector(env.db, testSecrets, TEST_SITE_URL, {
    account: account.accountId,
    kind: "meta",
    adAccountId: "5550001",
    accessToken: vendors.metaToken,
  });
  // On 2 March ad 1 is gone (refunded) and ad 0 restated to 7.50.
  vendors.meta.set(adAccountId, [
    ...generatedRows(2, "2026-03-01", 1),
    { ...oneRow("2026-03-02"), spend_micros: 7_500_000 },
  ]);
  const r = await syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-02" });
  assert.deepEqual(
    r.connectors.map((c) => [c.rows_written, c.rows_deleted]),
    [
      [1, 2],
      [1, 0],
    ],
  );
  assert.deepEqual(await stored(account.accountId), [
    { ad_id: "23850000000", day: "2026-03-01", spend: 0.01 },
    { ad_id: "23850000001", day: "2026-03-01", spend: 0.02 },
    { ad_id: "23850000000", day: "2026-03-02", spend: 7.5 },
    { ad_id: "999", day: "2026-03-02", spend: 5 },
  ]);
});

async function googleAccount(refreshToken: string) {
  const account = await seedAccount(env.db);
  vendors.google.set("1234567890", [
    { ...oneRow("2026-03-01"), ad_id: "700001", ad_name: "", spend_micros: 1_234_567 },
    { ...oneRow("2026-03-02"), ad_id: "700001", ad_name: "", spend_micros: 2_000_000 },
  ]);
  const c = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
    account: account.accountId,
    kind: "google",
    customerId: "123-456-7890",
    developerToken: "devtoken-abc123",
    clientId: "1234-abc.apps.googleusercontent.com",
    clientSecret: "GOCSPX-secret",
    refreshToken,
    loginCustomerId: "111-222-3333",
  });
  return { account, connector: c.id };
}

test("google: refresh, searchStream with the developer and manager headers, micros → units; 429 backs off", async () => {
  const { account } = await googleAccount("1//refresh-ok");
  slept = [];
  vendors.googleScript.push({
    status: 429,
    body: [
      {
        error: {
          code: 429,
          message: "Resource has been exhausted (e.g. check quota).",
          status: "RESOURCE_EXHAUSTED",
          details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "2s" }],
        },
      },
    ],
  });
  const before = vendors.requests.length;
  const r = await syncSpend(deps(), { account: account.accountId, platform: "google", since: "2026-03-01" });
  assert.equal(r.rows_written, 2);
  assert.deepEqual(slept, [2_000]);
  const search = vendors.requests.slice(before).filter((q) => q.path.endsWith("googleAds:searchStream"));
  assert.equal(search.length, 2);
  assert.equal(search[1]?.path, "/google/ads/v21/customers/1234567890/googleAds:searchStream");
  assert.equal(search[1]?.headers["developer-token"], "devtoken-abc123");
  assert.equal(search[1]?.headers["login-customer-id"], "1112223333");
  assert.equal(search[1]?.headers.authorization, "Bearer ya29.1//refresh-ok");
  const key = await account.key(["read:ads"]);
  assert.deepEqual(await spendOf(key), [
    {
      ad_id: "700001",
      ad_name: "ad 700001",
      adset_id: "23840000000",
      adset_name: "Set 0",
      campaign_id: "23830000000",
      campaign_name: "Campaign 0",
      platform: "google",
      // 1.234567 (stored to the cent: 1.23) + 2.00
      total_spend: 3.23,
      // Each day's row is ad 0 of a one-day generation: 0 clicks, 100 impressions a day.
      total_clicks: 0,
      total_impressions: 200,
      total_reach: 0,
    },
  ]);
});

test("google: a revoked refresh token is a clear error on the connector and nothing is stored", async () => {
  vendors.revokedRefreshTokens.add("1//revoked");
  const { account } = await googleAccount("1//revoked");
  await assert.rejects(
    syncSpend(deps(), { account: account.accountId, platform: "google", since: "2026-03-01" }),
    /Google refused the refresh token \(invalid_grant: Token has been expired or revoked\.\)/,
  );
  assert.deepEqual(await stored(account.accountId), []);
  assert.match((await connectorState(account.accountId))?.last_error ?? "", /invalid_grant/);
});

test("options are checked with the flag's name; no connector of the platform is a 404", async () => {
  const account = await seedAccount(env.db);
  const add = (o: Record<string, string>) =>
    addConnector(env.db, testSecrets, TEST_SITE_URL, { account: account.accountId, kind: "meta", ...o });
  await assert.rejects(add({ adAccountId: "act_1" }), /--access-token is required for --kind meta/);
  await assert.rejects(add({ adAccountId: "x1", accessToken: "EAAtoken12345" }), /--ad-account-id must be/);
  await assert.rejects(
    add({ adAccountId: "1", accessToken: "EAAtoken12345", customerId: "1234567890" }),
    /--customer-id does not apply to --kind meta/,
  );
  await assert.rejects(
    addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: account.accountId,
      kind: "google",
      customerId: "12-34",
      developerToken: "devtoken-abc123",
    }),
    /--client-id is required[\s\S]*--customer-id must be a Google Ads customer id/,
  );
  await assert.rejects(
    syncSpend(deps(), { account: account.accountId, platform: "google" }),
    /has no google connector/,
  );
  await assert.rejects(
    syncSpend(deps(), { account: account.accountId, platform: "meta", since: "2026-03-04" }),
    /since: 2026-03-04 is after today/,
  );
});
