/**
 * The application's pages against the API (`npm run bench -- app`): the server time of each report
 * page (app.inject: session lookup, tenant transaction, the query files, HTML rendering) next to
 * the API requests that serve the same numbers (app.inject: key, limits, scope, tenant transaction,
 * redaction), on the scale-10 demo account. Page and API samples alternate (A B A B) so both sides
 * see the same machine; the goal is page p50 ≤ 1.2 × API p50. See bench/README.md.
 */
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import pino from "pino";
import { DEMO_OWNER, seedDemo } from "../src/admin/demo.ts";
import { createKey } from "../src/admin/keys.ts";
import { buildApp } from "../src/app.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { rows } from "../src/db/client.ts";
import { createAuditWriter } from "../src/http/audit.ts";
import { createMemoryCounterStore } from "../src/http/rate-limiter.ts";
import { keyStoreFor } from "../src/main.ts";
import { userByEmail } from "../src/people/one-time-links.ts";
import { startSession } from "../src/people/sessions.ts";
import { routes } from "../src/routes/index.ts";
import { API_PREFIX } from "../src/routes/route-def.ts";
import {
  benchFiles,
  DEFAULT_SERVER_URL,
  envList,
  envNumber,
  type FreshDatabase,
  freshPglite,
  freshPostgres,
  onServer,
  percentile,
  writeResults,
} from "./support.ts";

type Backend = "pglite" | "postgres";
const BACKENDS = envList("BENCH_APP_BACKENDS", "pglite,postgres") as Backend[];
const SCALE = envNumber("BENCH_APP_SCALE", 10);
const SAMPLES = envNumber("BENCH_APP_SAMPLES", 40);
const GOAL = 1.2;

interface Landmarks {
  email: string;
  callId: number;
}

/**
 * Each page and the API requests a client would make for the same numbers. The overview also
 * reads this month's goals and month-to-date KPIs, which no single read route serves.
 */
function pairs(m: Landmarks): { page: string; api: string[] }[] {
  const email = encodeURIComponent(m.email);
  return [
    { page: "/", api: ["/dashboard/kpis", "/dashboard/daily", "/dashboard/breakdowns"] },
    { page: "/reports/attribution", api: ["/attribution", "/attribution/report"] },
    { page: "/reports/sales", api: ["/sales/summary", "/sales/reps"] },
    { page: "/reports/funnel", api: ["/funnel"] },
    { page: "/contacts", api: ["/contacts"] },
    {
      page: `/contacts/journey?email=${email}`,
      api: [`/journeys/contact?email=${email}`, `/contacts/calls?email=${email}`],
    },
    { page: "/calls", api: ["/calls"] },
    {
      page: `/calls/view?id=${m.callId}`,
      api: [`/calls/transcript?id=${m.callId}`, `/calls/recording?id=${m.callId}`],
    },
  ];
}

async function landmarks(db: FreshDatabase["db"], accountId: string): Promise<Landmarks> {
  return db.admin(accountId, async (tx) => {
    const [found] = await rows<Landmarks>(
      tx,
      sql`select
        (select c.email from touchpoints t join contacts c on c.account_id = t.account_id and c.id = t.contact_id
         where t.account_id = ${accountId} group by c.email order by count(*) desc, c.email limit 1) as email,
        (select artifact_id::float8 from call_transcript_segments where account_id = ${accountId}
         group by artifact_id order by count(*) desc, artifact_id limit 1) as "callId"`,
    );
    if (!found) throw new Error("no landmarks");
    return found;
  });
}

interface Figure {
  backend: Backend;
  page: string;
  api: string[];
  page_p50_ms: number;
  page_p99_ms: number;
  api_p50_ms: number;
  api_p99_ms: number;
  ratio_p50: number;
  goal_met: boolean;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function measure(backend: Backend): Promise<{ figures: Figure[]; seed_seconds: number }> {
  const fresh =
    backend === "pglite"
      ? await freshPglite("disk")
      : await freshPostgres(process.env.DATABASE_URL ?? DEFAULT_SERVER_URL, { statementTimeoutMs: 600_000 });
  const { db } = fresh;
  try {
    const secrets = createSecretBox([{ id: "bench", key: Buffer.alloc(32, 7) }]);
    const files = benchFiles(secrets, () => "http://127.0.0.1");
    const started = performance.now();
    const demo = await seedDemo(db, { seed: 1, scale: SCALE }, undefined, { secrets, files });
    const seedSeconds = (performance.now() - started) / 1000;
    if ("url" in fresh) await onServer(String(fresh.url), "vacuum analyze");
    else await db.maintain({ afterBulkWrite: true });
    console.log(`${backend}: demo account at scale ${SCALE} seeded in ${seedSeconds.toFixed(0)} s`);

    const logger = pino({ level: "warn" });
    const audit = createAuditWriter(db, logger);
    const app = await buildApp({
      db,
      secrets,
      keys: keyStoreFor(db),
      counters: createMemoryCounterStore(),
      audit,
      logger,
      routes,
      files,
      siteUrl: () => "http://127.0.0.1",
    });
    await app.ready();
    const owner = await userByEmail(db, DEMO_OWNER);
    if (!owner) throw new Error("no demo owner");
    const cookie = `ascribe_session=${await startSession(db, owner.id, new Date())}`;
    const figures: Figure[] = [];
    try {
      for (const pair of pairs(await landmarks(db, demo.account_id))) {
        // A key per pair: the per-key rate limit (600/min) would otherwise cap the samples.
        const { key } = await createKey(db, {
          account: demo.account_id,
          as: DEMO_OWNER,
          name: `bench ${pair.page}`.slice(0, 100),
          scopes: ["*"],
        });
        const page = async () => {
          const res = await app.inject({ method: "GET", url: pair.page, headers: { cookie } });
          if (res.statusCode !== 200) throw new Error(`${pair.page}: ${res.statusCode}`);
        };
        const api = async () => {
          for (const path of pair.api) {
            const res = await app.inject({
              method: "GET",
              url: API_PREFIX + path,
              headers: { authorization: `Bearer ${key}` },
            });
            if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
          }
        };
        const pageMs: number[] = [];
        const apiMs: number[] = [];
        for (let i = 0; i < SAMPLES + 2; i++) {
          for (const [run, into] of [
            [page, pageMs],
            [api, apiMs],
          ] as const) {
            const t = performance.now();
            await run();
            if (i >= 2) into.push(performance.now() - t); // two warm-up rounds
          }
        }
        pageMs.sort((a, b) => a - b);
        apiMs.sort((a, b) => a - b);
        const figure: Figure = {
          backend,
          page: pair.page.replace(/email=[^&]+/, "email=…").replace(/id=\d+/, "id=…"),
          api: pair.api.map((p) => p.split("?")[0] ?? p),
          page_p50_ms: round2(percentile(pageMs, 0.5)),
          page_p99_ms: round2(percentile(pageMs, 0.99)),
          api_p50_ms: round2(percentile(apiMs, 0.5)),
          api_p99_ms: round2(percentile(apiMs, 0.99)),
          ratio_p50: round2(percentile(pageMs, 0.5) / percentile(apiMs, 0.5)),
          goal_met: percentile(pageMs, 0.5) <= GOAL * percentile(apiMs, 0.5),
        };
        figures.push(figure);
        console.log(
          `  ${figure.page.padEnd(26)} page p50 ${figure.page_p50_ms.toFixed(1).padStart(7)} p99 ${figure.page_p99_ms.toFixed(1).padStart(7)} ms | API p50 ${figure.api_p50_ms.toFixed(1).padStart(7)} p99 ${figure.api_p99_ms.toFixed(1).padStart(7)} ms (${figure.api.join(" + ")}) | ${figure.ratio_p50.toFixed(2)}× ${figure.goal_met ? "ok" : "MISS"}`,
        );
      }
    } finally {
      await app.close();
      await audit.close();
    }
    return { figures, seed_seconds: Math.round(seedSeconds) };
  } finally {
    await fresh.drop();
  }
}

const timestamp = new Date().toISOString().replace(/[:.]/g, "-");
const results: { figures: Figure[]; seeds: object[] } = { figures: [], seeds: [] };
for (const backend of BACKENDS) {
  const { figures, seed_seconds } = await measure(backend);
  results.figures.push(...figures);
  results.seeds.push({ backend, scale: SCALE, seed_seconds });
}
const missed = results.figures.filter((f) => !f.goal_met);
console.log(
  missed.length === 0
    ? `every page within ${GOAL}× its API requests (p50)`
    : `${missed.length} page(s) above ${GOAL}× their API requests (p50): ${missed.map((f) => `${f.backend} ${f.page}`).join(", ")}`,
);
console.log(`results: ${writeResults("app", timestamp, { goal: GOAL, samples: SAMPLES, ...results })}`);
