import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import Stripe from "stripe";
import { removeConnector, testConnector } from "../../src/admin/connectors.ts";
import { rows } from "../../src/db/client.ts";
import { testSecrets, useTestApp } from "../helpers/harness.ts";
import {
  annChargeRefunded,
  annChargeSucceeded,
  annRefundCreated,
  bobInvoicePaid,
  caraChargeSucceeded,
  caraDisputeClosedWon,
  caraDisputeCreated,
  checkoutCompleted,
  customerCreated,
} from "./stripe-fixtures.ts";
import { apiData, type StripeAccount, stripeAccount as stripeAccountOf } from "./stripe-hook-helpers.ts";

const now = new Date("2026-03-31T12:00:00Z");
const nowSeconds = Math.floor(now.getTime() / 1000);
const env = useTestApp({ clock: () => now });
const MARCH = "from=2026-03-01&to=2026-03-31";

let ipCounter = 0;
/** Signed as Stripe signs (the SDK's own test header: `t=…,v1=HMAC-SHA256(secret, "t.body")`). */
function deliver(connectorId: string, body: unknown, secret: string | null, timestamp = nowSeconds) {
  ipCounter += 1;
  const payload = typeof body === "string" ? body : JSON.stringify(body);
  return env.app.inject({
    method: "POST",
    url: `/api/hooks/stripe/${connectorId}`,
    headers: {
      "content-type": "application/json; charset=utf-8",
      ...(secret
        ? { "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) }
        : {}),
    },
    payload,
    remoteAddress: `10.21.${Math.floor(ipCounter / 250)}.${ipCounter % 250}`,
  });
}

const stripeAccount = () => stripeAccountOf(env);
type Account = StripeAccount;
const api = (a: Account, path: string) => apiData(env, a, path);

interface EventRow {
  id: string;
  event_type: string;
  contact_email: string | null;
  amount: number | null;
  product_key: string | null;
  product_name: string | null;
  payment_status: string | null;
  counted: boolean;
  cancelled_at: string | null;
}

const events = async (a: Account) =>
  ((await api(a, `/events?${MARCH}&limit=100`)) as EventRow[])
    .map((e) => ({
      id: e.id,
      event_type: e.event_type,
      contact_email: e.contact_email,
      amount: e.amount,
      product_key: e.product_key,
      payment_status: e.payment_status,
      counted: e.counted,
      cancelled: e.cancelled_at !== null,
    }))
    .sort((x, y) => (x.id < y.id ? -1 : 1));

const purchases = async (a: Account) =>
  ((await api(a, `/contacts/purchases?${MARCH}`)) as Record<string, unknown>[])
    .map((p) => [p.id, p.contact_email, p.product_key, p.amount])
    .sort();

const reportRow = async (a: Account, source: string) => {
  const report = (await api(a, `/attribution/report?${MARCH}`)) as Record<string, unknown>[];
  const row = report.find((r) => r.out_source === source);
  return row
    ? {
        gross: row.out_gross_revenue,
        refunds: row.out_refund_amount,
        disputes: row.out_dispute_amount,
        net: row.out_net_revenue,
      }
    : null;
};

const stored = (a: Account, table: "events" | "connector_deliveries" | "purchases") =>
  env.db
    .admin(a.accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from ${sql.identifier(table)} where account_id = ${a.accountId}`,
      ),
    )
    .then((r) => r[0]?.n);

describe("POST /api/hooks/stripe/<connector id>", () => {
  test("payments become sales and purchases, refunds and disputes land on them, in every report", async () => {
    const a = await stripeAccount();
    const ok = async (body: unknown) => {
      const r = await deliver(a.connectorId, body, a.secret);
      assert.equal(r.statusCode, 200, r.body);
      return r.json().data;
    };

    assert.deepEqual(await ok(checkoutCompleted), {
      received: "evt_1AnnCheckout",
      type: "checkout.session.completed",
      outcome: "stored",
      inserted: 1,
      updated: 0,
      unchanged: 0,
    });
    // The checkout's charge is the same payment: acknowledged, not a second sale.
    const charge = await ok(annChargeSucceeded);
    assert.equal(charge.outcome, "ignored");
    assert.equal((await ok(annChargeRefunded)).outcome, "stored");
    // The refund object repeats what charge.refunded recorded.
    assert.equal((await ok(annRefundCreated)).outcome, "ignored");
    assert.equal((await ok(bobInvoicePaid)).outcome, "stored");
    assert.equal((await ok(caraChargeSucceeded)).outcome, "stored");
    assert.equal((await ok(caraDisputeCreated)).outcome, "stored");
    assert.deepEqual(await ok(customerCreated), {
      received: "evt_1CustomerCreated",
      type: "customer.created",
      outcome: "ignored",
      reason: "event type customer.created is not used",
    });

    const sale = { event_type: "sale", payment_status: "paid", cancelled: false };
    const adjustment = { event_type: "payment", counted: false, cancelled: false };
    assert.deepEqual(await events(a), [
      {
        id: "stripe:dp_1CaraDispute",
        ...adjustment,
        contact_email: "cara@example.com",
        amount: 120,
        product_key: "prod_Ebook",
        payment_status: "disputed",
      },
      {
        id: "stripe:in_1BobInv",
        ...sale,
        contact_email: "bob@example.com",
        amount: 5000,
        product_key: "prod_Coaching",
        counted: true,
      },
      {
        id: "stripe:pi_3AnnPay",
        ...sale,
        contact_email: "ann.buyer@example.com",
        amount: 499,
        product_key: "prod_Course",
        counted: true,
      },
      {
        id: "stripe:pi_3CaraPay",
        ...sale,
        contact_email: "cara@example.com",
        amount: 120,
        product_key: "prod_Ebook",
        counted: true,
      },
      {
        id: "stripe:refund:ch_3AnnCharge",
        ...adjustment,
        contact_email: "ann.buyer@example.com",
        amount: 100,
        product_key: "prod_Course",
        payment_status: "refunded",
      },
    ]);
    // /events does not show currencies: read from the table.
    const currencies = await env.db.admin(a.accountId, (tx) =>
      rows<{ id: string; currency: string }>(
        tx,
        sql`select id, currency from events where account_id = ${a.accountId} order by id`,
      ),
    );
    assert.deepEqual(
      currencies.map((c) => [c.id, c.currency]),
      [
        ["stripe:dp_1CaraDispute", "EUR"],
        ["stripe:in_1BobInv", "JPY"],
        ["stripe:pi_3AnnPay", "EUR"],
        ["stripe:pi_3CaraPay", "EUR"],
        ["stripe:refund:ch_3AnnCharge", "EUR"],
      ],
    );
    assert.deepEqual(await purchases(a), [
      ["stripe:in_1BobInv", "bob@example.com", "prod_Coaching", 5000],
      ["stripe:pi_3AnnPay", "ann.buyer@example.com", "prod_Course", 499],
      ["stripe:pi_3CaraPay", "cara@example.com", "prod_Ebook", 120],
    ]);
    // Ann's and Cara's UTM (Checkout and PaymentIntent metadata): 499 + 120 gross, Ann's 100 refunded,
    // Cara's 120 disputed.
    assert.deepEqual(await reportRow(a, "newsletter"), { gross: 619, refunds: 100, disputes: 120, net: 399 });

    // The seller wins the dispute: it is reversed.
    assert.equal((await ok(caraDisputeClosedWon)).outcome, "stored");
    assert.deepEqual(await reportRow(a, "newsletter"), { gross: 619, refunds: 100, disputes: 0, net: 519 });
    const dispute = (await events(a)).find((e) => e.id === "stripe:dp_1CaraDispute");
    assert.equal(dispute?.cancelled, true);

    const status = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.equal(status.ok, true);
    assert.equal(status.last_event_at, now.toISOString());
    assert.equal(status.last_error, null);
  });

  test("a charge first, its checkout after: one sale, the checkout's product", async () => {
    const a = await stripeAccount();
    assert.equal((await deliver(a.connectorId, annChargeSucceeded, a.secret)).json().data.outcome, "stored");
    assert.equal((await deliver(a.connectorId, checkoutCompleted, a.secret)).json().data.outcome, "stored");
    const found = await events(a);
    assert.deepEqual(
      found.map((e) => [e.id, e.amount, e.product_key, e.counted]),
      [["stripe:pi_3AnnPay", 499, "prod_Course", true]],
    );
    // A refund object before its charge.refunded: its own amount, then the charge's total replaces it.
    const refund = await deliver(a.connectorId, annRefundCreated, a.secret);
    assert.equal(refund.json().data.outcome, "stored");
    const partial2 = structuredClone(annChargeRefunded);
    partial2.data.object.amount_refunded = 25000;
    assert.equal((await deliver(a.connectorId, partial2, a.secret)).json().data.outcome, "stored");
    assert.deepEqual(await reportRow(a, "newsletter"), { gross: 499, refunds: 250, disputes: 0, net: 249 });
  });

  test("a replay of any delivery changes nothing", async () => {
    const a = await stripeAccount();
    const all = [
      checkoutCompleted,
      annChargeSucceeded,
      annChargeRefunded,
      annRefundCreated,
      bobInvoicePaid,
      caraChargeSucceeded,
      caraDisputeCreated,
      caraDisputeClosedWon,
      customerCreated,
    ];
    for (const e of all) assert.equal((await deliver(a.connectorId, e, a.secret)).statusCode, 200);
    const before = {
      events: await events(a),
      purchases: await purchases(a),
      report: await reportRow(a, "newsletter"),
    };
    // Stripe resends with the same event id (a later signature time); in any order.
    for (const e of [...all].reverse()) {
      const r = await deliver(a.connectorId, e, a.secret, nowSeconds - 120);
      assert.equal(r.statusCode, 200);
      assert.equal(r.json().data.outcome, "duplicate", e.id);
    }
    assert.deepEqual(
      { events: await events(a), purchases: await purchases(a), report: await reportRow(a, "newsletter") },
      before,
    );
    assert.equal(before.report?.disputes, 0, "the won dispute stays reversed");
    assert.equal(await stored(a, "connector_deliveries"), all.length);
  });

  test("wrong secret, altered body, stale or missing signature → 401, nothing stored", async () => {
    const a = await stripeAccount();
    const body = JSON.stringify(checkoutCompleted);
    const refusals = [
      await deliver(a.connectorId, body, "whsec_not_the_endpoint_secret"),
      await deliver(a.connectorId, body.replace("49900", "99900"), null).then(() =>
        env.app.inject({
          method: "POST",
          url: `/api/hooks/stripe/${a.connectorId}`,
          headers: {
            "content-type": "application/json",
            "stripe-signature": Stripe.webhooks.generateTestHeaderString({
              payload: body,
              secret: a.secret,
              timestamp: nowSeconds,
            }),
          },
          payload: body.replace("49900", "99900"),
          remoteAddress: "10.22.0.1",
        }),
      ),
      await deliver(a.connectorId, body, a.secret, nowSeconds - 301),
      await deliver(a.connectorId, body, null),
    ];
    assert.deepEqual(
      refusals.map((r) => [r.statusCode, r.json().error, r.json().reason]),
      [
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "mismatch"],
        [401, "invalid_signature", "stale"],
        [401, "invalid_signature", "missing"],
      ],
    );
    assert.equal(await stored(a, "events"), 0);
    assert.equal(await stored(a, "purchases"), 0);
    assert.equal(await stored(a, "connector_deliveries"), 0);
    const status = await testConnector(env.db, testSecrets, { account: a.accountId, id: a.connectorId });
    assert.equal(status.ok, false);
    assert.equal(status.last_event_at, null);
    assert.equal(status.last_error, "signature missing");
    // Within the tolerance it is taken.
    assert.equal((await deliver(a.connectorId, body, a.secret, nowSeconds - 299)).statusCode, 200);
    assert.equal(await stored(a, "events"), 1);
  });

  test("a delivery lands only in its connector's account; unknown or removed ids are 404", async () => {
    const a = await stripeAccount();
    const b = await stripeAccount();
    // B's secret on A's connector: refused, nothing anywhere.
    assert.equal((await deliver(a.connectorId, checkoutCompleted, b.secret)).statusCode, 401);
    // B's own connector: B's account only.
    assert.equal((await deliver(b.connectorId, checkoutCompleted, b.secret)).statusCode, 200);
    assert.equal(await stored(a, "events"), 0);
    assert.equal(await stored(a, "purchases"), 0);
    assert.deepEqual(await events(a), []);
    assert.equal((await events(b)).length, 1);

    const unknown = await deliver("00000000-0000-4000-8000-000000000000", checkoutCompleted, a.secret);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, "not_found");
    assert.equal((await deliver("not-a-uuid", checkoutCompleted, a.secret)).statusCode, 404);
    await removeConnector(env.db, { account: a.accountId, id: a.connectorId });
    assert.equal((await deliver(a.connectorId, caraChargeSucceeded, a.secret)).statusCode, 404);
    assert.equal(await stored(a, "events"), 0);
  });
});
