/**
 * `npm run bench -- spend-sync`: a 90-day × 200-ad spend sync (18,000 rows) from a loopback server
 * speaking Meta's insights edge (500 rows a page: 36 pages) and Google Ads' searchStream, into a fresh
 * PostgreSQL database (issue 21's benchmark; goal ≤ 10 s). Each platform runs twice: the first sync
 * inserts the days, the second replaces them (what the schedule does every interval).
 */
import { randomBytes } from "node:crypto";
import { createAccount } from "../src/admin/accounts.ts";
import { addConnector } from "../src/admin/connectors.ts";
import { syncSpend } from "../src/connectors/spend-sync.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { generatedRows, startFakeSpendVendors } from "../test/helpers/fake-spend-vendors.ts";
import { benchServerUrl, fmt, freshPostgres, machineInfo, writeResults } from "./support.ts";

const ADS = 200;
const DAYS = 90;
const GOAL_SECONDS = 10;

async function main(): Promise<void> {
  const secrets = createSecretBox([{ id: "bench", key: randomBytes(32) }]);
  const fresh = await freshPostgres(benchServerUrl(), { statementTimeoutMs: 15_000 });
  const vendors = await startFakeSpendVendors();
  try {
    const now = new Date();
    const since = new Date(now.getTime() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    vendors.meta.set("1000001", generatedRows(ADS, since, DAYS));
    vendors.google.set("1000000002", generatedRows(ADS, since, DAYS));
    const account = await createAccount(fresh.db, { name: "Spend bench", plan: "business", timezone: "UTC" });
    await addConnector(fresh.db, secrets, "http://localhost", {
      account: account.id,
      kind: "meta",
      adAccountId: "1000001",
      accessToken: vendors.metaToken,
    });
    await addConnector(fresh.db, secrets, "http://localhost", {
      account: account.id,
      kind: "google",
      customerId: "1000000002",
      developerToken: "bench-developer-token",
      clientId: "bench.apps.googleusercontent.com",
      clientSecret: "bench-secret",
      refreshToken: "1//bench-refresh",
    });
    const deps = {
      db: fresh.db,
      secrets,
      apis: {
        metaApiUrl: vendors.metaApiUrl,
        googleAdsApiUrl: vendors.googleAdsApiUrl,
        googleTokenUrl: vendors.googleTokenUrl,
      },
    };
    const runs: { platform: string; run: "first" | "re-sync"; rows: number; seconds: number }[] = [];
    for (const platform of ["meta", "google"] as const)
      for (const run of ["first", "re-sync"] as const) {
        const started = performance.now();
        const r = await syncSpend(deps, { account: account.id, platform, since });
        const seconds = (performance.now() - started) / 1000;
        runs.push({ platform, run, rows: r.rows_written, seconds });
        console.log(
          `  ${platform.padEnd(6)} ${run.padEnd(7)} ${r.rows_written} rows in ${fmt(seconds, 2)} s`,
        );
      }
    const worst = Math.max(...runs.map((r) => r.seconds));
    console.log(
      `\nPostgreSQL, ${ADS} ads × ${DAYS} days: slowest sync ${fmt(worst, 2)} s (goal ≤ ${GOAL_SECONDS} s: ${worst <= GOAL_SECONDS ? "met" : "missed"})`,
    );
    const file = writeResults("spend-sync", now.toISOString(), {
      machine: machineInfo(),
      ads: ADS,
      days: DAYS,
      runs,
      goal: { seconds: GOAL_SECONDS },
    });
    console.log(`\nResults: ${file} (and spend-sync-latest.json)`);
  } finally {
    await vendors.close();
    await fresh.drop();
  }
}

await main();
