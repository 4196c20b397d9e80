/**
 * Webhook ingestion benchmark (`npm run bench -- webhooks`): Stripe deliveries to
 * `POST /api/hooks/stripe/<connector id>` (each a new `charge.succeeded`, signed as Stripe signs and
 * verified with the `stripe` package) and, for comparison, single CRM events to the signed webhook
 * `POST /api/webhook/events`, through the real app on a fresh PostgreSQL database, at saturation
 * (closed loop, autocannon in a worker thread), the two targets interleaved round by round. Issue
 * 21's goal: ≥ 500 Stripe events/s on PostgreSQL. See bench/README.md ("Webhooks").
 */
import { randomBytes } from "node:crypto";
import { type MessagePort, workerData } from "node:worker_threads";
import { sql } from "drizzle-orm";
import pino from "pino";
import Stripe from "stripe";
import { createAccount } from "../src/admin/accounts.ts";
import { addConnector } from "../src/admin/connectors.ts";
import { rotateWebhookSecret } from "../src/admin/webhook-secret.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";
import { rows } from "../src/db/client.ts";
import { signPayload } from "../src/ingest/webhook-signature.ts";
import { closedLoop, LoadGenerator, loadKnobs, runSuite, serveApp, serveLoad } from "./load.ts";
import {
  benchServerUrl,
  envInt,
  envList,
  fmt,
  freshPostgres,
  machineInfo,
  median,
  onServer,
  pad,
  writeResults,
} from "./support.ts";

type Target = "stripe" | "webhook";

interface WorkerInput {
  stripeSecret: string;
  webhookSecret: string;
  clientKey: string;
  connectorId: string;
  /** Distinct buyers the events name (repeat buyers exercise sale counting). */
  buyers: number;
  /** Ads of the account (BENCH_WEBHOOK_ADS); with some, each webhook event names one by its id. */
  ads: number;
}

/** The id of the account's ad `i` (0-based), as the bench writes them. */
const benchAdId = (i: number) => String(120210000000000000n + BigInt(i + 1));

interface RunSpec {
  url: string;
  target: Target;
  durationSec: number;
  connections: number;
}

interface LoadResult {
  ok: number;
  responses: number;
  elapsedSec: number;
  eventsPerSec: number;
  latencyMs: { p50: number; p99: number };
  statusCodes: Record<string, number>;
}

/** The next delivery of a target: a new event id each time, buyers in turn. */
function deliveries(input: WorkerInput) {
  let n = 0;
  const now = () => Math.floor(Date.now() / 1000);
  return (target: Target): { path: string; body: string; headers: Record<string, string> } => {
    n += 1;
    const buyer = n % input.buyers;
    const email = `buyer${buyer}@bench.example`;
    if (target === "webhook") {
      const body = JSON.stringify({
        id: `crm-${workerSeed}-${n}`,
        event_type: n % 3 === 0 ? "sale" : "lead",
        event_datetime: new Date().toISOString(),
        contact_email: email,
        amount: n % 3 === 0 ? 199 : undefined,
        currency: "EUR",
        utm_source: "facebook",
        utm_campaign: "bench",
        utm_ad_id: input.ads > 0 ? benchAdId(n % input.ads) : undefined,
      });
      return {
        path: `/api/webhook/events?client_key=${input.clientKey}`,
        body,
        headers: {
          "content-type": "application/json",
          "x-ascribe-signature": signPayload(input.webhookSecret, body, now()),
        },
      };
    }
    const charge = `ch_bench${workerSeed}${n}`;
    const payload = JSON.stringify({
      id: `evt_bench${workerSeed}${n}`,
      object: "event",
      api_version: "2025-10-29.clover",
      created: now(),
      type: "charge.succeeded",
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: {
        object: {
          id: charge,
          object: "charge",
          amount: 19900,
          amount_captured: 19900,
          amount_refunded: 0,
          billing_details: { email, name: `Buyer ${buyer}`, phone: null, address: null },
          captured: true,
          created: now(),
          currency: "eur",
          customer: `cus_bench${buyer}`,
          metadata: { product_key: "prod_bench", product_name: "Bench course", utm_source: "facebook" },
          paid: true,
          payment_intent: `pi_${charge}`,
          refunded: false,
          status: "succeeded",
        },
      },
    });
    return {
      path: `/api/hooks/stripe/${input.connectorId}`,
      body: payload,
      headers: {
        "content-type": "application/json",
        "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: input.stripeSecret }),
      },
    };
  };
}

/** Ids differ between runs of the suite against a kept database. */
const workerSeed = randomBytes(3).toString("hex");

function workerMain(port: MessagePort): void {
  const next = deliveries(workerData as WorkerInput);
  serveLoad(port, async (spec: RunSpec): Promise<LoadResult> => {
    const result = await closedLoop(spec, {
      method: "POST",
      setupRequest: (req) => ({ ...req, method: "POST", ...next(spec.target) }),
    });
    return {
      ok: result.ok,
      responses: result.responses,
      elapsedSec: result.elapsedSec,
      eventsPerSec: result.ok / result.elapsedSec,
      latencyMs: { p50: result.latencyMs.p50, p99: result.latencyMs.p99 },
      statusCodes: result.statusCodes,
    };
  });
}

const GOAL_STRIPE_EVENTS_PER_SEC = 500;

async function main(): Promise<void> {
  const knobs = loadKnobs(10);
  const ads = envInt("BENCH_WEBHOOK_ADS", 0, 0);
  // Stripe sends a burst of deliveries at once: the group commit's batches grow with the senders.
  const levels = envList("BENCH_CONNECTIONS", "10,50").map((raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CONNECTIONS: ${raw} is not a connection count`);
    return n;
  });
  const logger = pino({ level: "warn" }, process.stderr);
  const secrets = createSecretBox([{ id: "bench", key: randomBytes(32) }]);
  const fresh = await freshPostgres(benchServerUrl(), { statementTimeoutMs: 5_000 });
  const served = await serveApp(fresh.db, logger, undefined, secrets);
  let load: LoadGenerator<RunSpec, LoadResult> | null = null;
  try {
    const account = await createAccount(fresh.db, {
      name: "Webhook bench",
      plan: "business",
      timezone: "Europe/Paris",
      owner: "owner@bench.ascribe.local",
    });
    const connector = await addConnector(fresh.db, secrets, served.url, {
      account: account.id,
      kind: "stripe",
      secret: `whsec_${randomBytes(24).toString("base64url")}`,
    });
    const webhook = await rotateWebhookSecret(fresh.db, secrets, { account: account.id });
    if (ads > 0)
      await fresh.db.admin(account.id, (tx) =>
        tx.execute(sql`
          insert into ads (account_id, platform, ad_id, ad_name, campaign_id, campaign_name)
          select ${account.id}, 'meta', (120210000000000000 + i)::text, 'Bench ad ' || i,
                 (120200000000000000 + i / 20)::text, 'Bench campaign ' || (i / 20)
          from generate_series(1, ${ads}) i`),
      );
    load = await LoadGenerator.start<RunSpec, LoadResult>(import.meta.url, {
      stripeSecret: connector.secret ?? "",
      webhookSecret: webhook.secret,
      clientKey: account.client_key,
      connectorId: connector.id,
      buyers: 2_000,
      ads,
    } satisfies WorkerInput);
    const runs: (LoadResult & { target: Target; round: number; connections: number })[] = [];
    for (let round = 1; round <= knobs.rounds; round++) {
      for (const connections of levels) {
        for (const target of ["stripe", "webhook"] as const) {
          const spec = { url: served.url, target, connections };
          if (knobs.warmupSec > 0) await load.run({ ...spec, durationSec: knobs.warmupSec });
          // As in the collect suite: this machine's PostgreSQL runs with autovacuum off, so the bench
          // does what its ANALYZE would have done by then, outside the measured time. Unanalyzed, the
          // planner keeps the empty tables it saw at migration and looks up a batch's events by id
          // with a scan of the account's events (5 ms a statement at 30,000 events, growing).
          await onServer(fresh.url.toString(), "vacuum analyze");
          const r = await load.run({ ...spec, durationSec: knobs.durationSec });
          runs.push({ ...r, target, round, connections });
          console.log(
            `  round ${round} ${pad(String(connections), 3)} conns ${target.padEnd(8)} ${pad(fmt(r.eventsPerSec, 0), 6)} events/s  p50 ${fmt(r.latencyMs.p50, 1)} ms  p99 ${fmt(r.latencyMs.p99, 1)} ms  ${JSON.stringify(r.statusCodes)}`,
          );
        }
      }
    }
    const [stored] = await fresh.db.admin(account.id, (tx) =>
      rows<{ events: number; purchases: number }>(
        tx,
        sql`select (select count(*)::int from events where account_id = ${account.id}) as events,
                   (select count(*)::int from purchases where account_id = ${account.id}) as purchases`,
      ),
    );
    const medianOf = (t: Target, connections: number) =>
      median(runs.filter((r) => r.target === t && r.connections === connections).map((r) => r.eventsPerSec));
    const medians = levels.map((connections) => ({
      connections,
      stripe_events_per_sec: medianOf("stripe", connections),
      webhook_events_per_sec: medianOf("webhook", connections),
    }));
    console.log(`\nPostgreSQL, medians of ${knobs.rounds} interleaved rounds:`);
    for (const m of medians) {
      const met = m.stripe_events_per_sec >= GOAL_STRIPE_EVENTS_PER_SEC ? "met" : "missed";
      console.log(
        `  ${m.connections} connections: Stripe deliveries (signature verified) ${fmt(m.stripe_events_per_sec, 0)} events/s (goal ≥ ${GOAL_STRIPE_EVENTS_PER_SEC}: ${met}); signed webhook, one event per request, ${fmt(m.webhook_events_per_sec, 0)} events/s`,
      );
    }
    console.log(`  stored: ${stored?.events} events, ${stored?.purchases} purchases`);
    const file = writeResults("webhooks", new Date().toISOString(), {
      machine: machineInfo(),
      knobs: { ...knobs, connections: levels, ads },
      runs,
      medians,
      goal: { stripe_events_per_sec: GOAL_STRIPE_EVENTS_PER_SEC },
      stored,
    });
    console.log(`\nResults: ${file} (and webhooks-latest.json)`);
  } finally {
    await load?.stop();
    await served.app.close();
    await served.audit.close();
    await served.counters.close();
    await fresh.drop();
  }
}

runSuite(main, workerMain);
