/**
 * `npm run bench -- tenant-context`: what setting a request's tenant context costs on PostgreSQL,
 * one option against another, below HTTP. Every option runs the same query (the account's ICP
 * criteria) from `BENCH_CONNECTIONS` concurrent callers for `BENCH_DURATION` seconds; the options
 * take turns in each round (interleaved) and the figures are medians over the rounds.
 *
 * - `begin-set-commit`: begin / set_config (bound) / query / commit — the request path before
 *   issue 20: three round trips besides the query.
 * - `tenant`: `db.tenant` — begin, RESET ALL and set_config in one simple query, then commit: two.
 * - `read`: `db.read` — RESET ALL and a session-level set_config in one simple query, no
 *   transaction: one. What GET routes use.
 * - `bare`: the query alone as the superuser (no role, no RLS): none. The ceiling.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createAccount } from "../src/admin/accounts.ts";
import { REQUEST_ROLE, type Sql } from "../src/db/client.ts";
import { icpCriteria } from "../src/queries/icp-criteria.ts";
import { replaceIcpCriteria } from "../src/queries/replace-icp-criteria.ts";
import {
  benchServerUrl,
  envInt,
  fmt,
  freshPostgres,
  machineInfo,
  median,
  pad,
  writeResults,
} from "./support.ts";

const durationSec = envInt("BENCH_DURATION", 5, 1);
const rounds = envInt("BENCH_ROUNDS", 5, 1);
const connections = envInt("BENCH_CONNECTIONS", 10, 1);

const fresh = await freshPostgres(benchServerUrl(), { statementTimeoutMs: 10_000, prefix: "ascribe_ctx" });
const { db } = fresh;
const account = await createAccount(db, {
  name: "Bench",
  plan: "business",
  timezone: "UTC",
  owner: "b@x.test",
});
const accountId = account.id;
await db.admin(accountId, (tx) =>
  replaceIcpCriteria(tx, accountId, { criteria: { industries: ["SaaS"], company_size: "11-50" } }),
);

// The baseline and the ceiling use a pool of their own, as large as the app's.
const pool = new pg.Pool({ connectionString: fresh.url.toString(), max: 10, options: "-c jit=off" });
const handles = new WeakMap<pg.PoolClient, Sql>();
const handleOf = (client: pg.PoolClient) => {
  let handle = handles.get(client);
  if (!handle) {
    handle = drizzle(client) as unknown as Sql;
    handles.set(client, handle);
  }
  return handle;
};

const options: Record<string, () => Promise<unknown>> = {
  "begin-set-commit": async () => {
    const client = await pool.connect();
    try {
      await client.query("begin");
      await client.query("select set_config('role', $3, true), set_config($1, $2, true)", [
        "app.account_id",
        accountId,
        REQUEST_ROLE,
      ]);
      const result = await icpCriteria(handleOf(client), accountId);
      await client.query("commit");
      return result;
    } finally {
      client.release();
    }
  },
  tenant: () => db.tenant(accountId, (tx) => icpCriteria(tx, accountId)),
  read: () => db.read(accountId, (tx) => icpCriteria(tx, accountId)),
  bare: async () => {
    const client = await pool.connect();
    try {
      return await icpCriteria(handleOf(client), accountId);
    } finally {
      client.release();
    }
  },
};

for (const [name, run] of Object.entries(options)) {
  const answer = JSON.stringify(await run());
  if (!answer.includes("SaaS")) throw new Error(`${name} answered ${answer}`);
}

async function measure(run: () => Promise<unknown>, seconds = durationSec): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        await run();
        done += 1;
      }
    }),
  );
  return done / seconds;
}

const perOption = new Map<string, number[]>(Object.keys(options).map((name) => [name, []]));
for (let round = 1; round <= rounds; round += 1) {
  for (const [name, run] of Object.entries(options)) {
    await measure(run, 1); // a second's warm-up at the same load
    perOption.get(name)?.push(await measure(run));
  }
  console.log(`round ${round}/${rounds} done`);
}

const bare = median(perOption.get("bare") ?? []);
const figures = [...perOption].map(([name, values]) => ({
  option: name,
  perSecond: median(values),
  ofBare: median(values) / bare,
  rounds: values,
}));
console.log(
  `\nTenant context on PostgreSQL: ${connections} callers, ${rounds} rounds × ${durationSec} s, medians`,
);
console.log(`${"option".padEnd(18)}${pad("queries/s", 11)}${pad("÷ bare", 9)}`);
for (const f of figures) {
  console.log(`${f.option.padEnd(18)}${pad(fmt(f.perSecond, 0), 11)}${pad(fmt(f.ofBare, 2), 9)}`);
}
const timestamp = new Date().toISOString();
const file = writeResults("tenant-context", timestamp, {
  suite: "tenant-context",
  timestamp,
  machine: machineInfo(),
  parameters: { durationSec, rounds, connections },
  figures,
});
console.log(`\nwrote ${file}`);
await pool.end();
await fresh.drop();
