import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import Stripe from "stripe";
import { stripeAction } from "../../src/connectors/stripe-events.ts";
import { storeStripeDeliveries } from "../../src/connectors/stripe-store.ts";
import { rows } from "../../src/db/client.ts";
import { testSecrets, useTestApp } from "../helpers/harness.ts";
import {
  annChargeRefunded,
  annChargeSucceeded,
  annRefundCreated,
  bobInvoicePaid,
  caraChargeSucceeded,
  caraDisputeCreated,
  checkoutCompleted,
  customerCreated,
} from "./stripe-fixtures.ts";
import { apiData, type StripeAccount, stripeAccount as stripeAccountOf } from "./stripe-hook-helpers.ts";

/*
 * Stripe deliveries of one account that arrive together are group-committed: one transaction for
 * the batch (src/connectors/stripe-store.ts). Each must get the outcome it would have had alone, in
 * arrival order, and the stored rows must be those of one-by-one delivery (stripe-hook.test.ts
 * pins those against the fixtures; the figures here are the same, written out again).
 */

const now = new Date("2026-03-31T12:00:00Z");
const env = useTestApp({ clock: () => now });
const MARCH = "from=2026-03-01&to=2026-03-31";

type Fixture = typeof checkoutCompleted;

const stripeAccount = () => stripeAccountOf(env);
type Account = StripeAccount;
const api = (a: Account, path: string) => apiData(env, a, path);

/** id, type, amount, status and whether counted, by id. */
const events = async (a: Account) =>
  ((await api(a, `/events?${MARCH}&limit=100`)) as Record<string, unknown>[])
    .map((e) => [e.id, e.event_type, e.amount, e.payment_status, e.counted])
    .sort((x, y) => String(x[0]).localeCompare(String(y[0])));

const purchases = async (a: Account) =>
  ((await api(a, `/contacts/purchases?${MARCH}`)) as Record<string, unknown>[])
    .map((p) => [p.id, p.contact_email, p.amount])
    .sort();

const newsletterRevenue = async (a: Account) => {
  const report = (await api(a, `/attribution/report?${MARCH}`)) as Record<string, unknown>[];
  const row = report.find((r) => r.out_source === "newsletter");
  return row && [row.out_gross_revenue, row.out_refund_amount, row.out_dispute_amount, row.out_net_revenue];
};

/** What one-by-one delivery of every fixture stores (stripe-hook.test.ts). */
const EVENTS = [
  ["stripe:dp_1CaraDispute", "payment", 120, "disputed", false],
  ["stripe:in_1BobInv", "sale", 5000, "paid", true],
  ["stripe:pi_3AnnPay", "sale", 499, "paid", true],
  ["stripe:pi_3CaraPay", "sale", 120, "paid", true],
  ["stripe:refund:ch_3AnnCharge", "payment", 100, "refunded", false],
];
const PURCHASES = [
  ["stripe:in_1BobInv", "bob@example.com", 5000],
  ["stripe:pi_3AnnPay", "ann.buyer@example.com", 499],
  ["stripe:pi_3CaraPay", "cara@example.com", 120],
];

const action = (f: Fixture) =>
  stripeAction({
    id: f.id,
    type: f.type,
    created: f.created,
    object: f.data.object as Record<string, unknown>,
  });

describe("Stripe deliveries stored together", () => {
  test("one batch: each delivery's outcome as if alone, in arrival order; the rows of one-by-one delivery", async () => {
    const a = await stripeAccount();
    const arrived: Fixture[] = [
      checkoutCompleted,
      annChargeSucceeded,
      annChargeRefunded,
      annRefundCreated,
      bobInvoicePaid,
      caraChargeSucceeded,
      caraDisputeCreated,
      customerCreated,
      checkoutCompleted,
    ];
    const outcomes = await env.db.tenant(a.accountId, (tx) =>
      storeStripeDeliveries(
        tx,
        a.accountId,
        arrived.map((f) => ({ connectorId: a.connectorId, deliveryId: f.id, action: action(f), at: now })),
        testSecrets,
      ),
    );
    const inserted = { outcome: "stored", inserted: 1, updated: 0, unchanged: 0 };
    assert.deepEqual(outcomes, [
      inserted,
      { outcome: "ignored", reason: "this payment's sale is already recorded from its checkout or invoice" },
      inserted,
      { outcome: "ignored", reason: "the charge's refunded total is already recorded (charge.refunded)" },
      inserted,
      inserted,
      inserted,
      { outcome: "ignored", reason: "event type customer.created is not used" },
      { outcome: "duplicate" },
    ]);
    assert.deepEqual(await events(a), EVENTS);
    assert.deepEqual(await purchases(a), PURCHASES);
    assert.deepEqual(await newsletterRevenue(a), [619, 100, 120, 399]);
  });

  test("concurrent deliveries through the hook: every one answered, the same rows; a bad one fails alone", async () => {
    const a = await stripeAccount();
    const deliver = (f: unknown) => {
      const payload = JSON.stringify(f);
      return env.app.inject({
        method: "POST",
        url: `/api/hooks/stripe/${a.connectorId}`,
        headers: {
          "content-type": "application/json",
          "stripe-signature": Stripe.webhooks.generateTestHeaderString({
            payload,
            secret: a.secret,
            timestamp: Math.floor(now.getTime() / 1000),
          }),
        },
        payload,
      });
    };
    // An amount no sale can have (10^13 EUR): refused by the ingest's validation.
    const absurd = {
      ...caraChargeSucceeded,
      id: "evt_3Absurd",
      data: {
        object: {
          ...caraChargeSucceeded.data.object,
          id: "ch_3Absurd",
          payment_intent: "pi_3Absurd",
          amount: 1e15,
          amount_captured: 1e15,
          billing_details: {
            ...(caraChargeSucceeded.data.object.billing_details as Record<string, unknown>),
            email: "dan@example.com",
          },
        },
      },
    };
    // Sales first, then their adjustments (a refund sent before its sale exists is another case).
    const sales = await Promise.all(
      [checkoutCompleted, bobInvoicePaid, caraChargeSucceeded, absurd].map(deliver),
    );
    assert.deepEqual(
      sales.map((r) => r.statusCode),
      [200, 200, 200, 400],
    );
    assert.match(sales[3]?.json().error, /^amount: /);
    const later = await Promise.all(
      [annChargeSucceeded, annChargeRefunded, caraDisputeCreated, customerCreated, checkoutCompleted].map(
        deliver,
      ),
    );
    assert.deepEqual(
      later.map((r) => r.statusCode),
      [200, 200, 200, 200, 200],
    );
    assert.equal(later[4]?.json().data.outcome, "duplicate");
    assert.equal((await deliver(annRefundCreated)).json().data.outcome, "ignored");
    assert.deepEqual(await events(a), EVENTS);
    assert.deepEqual(await purchases(a), PURCHASES);
    assert.deepEqual(await newsletterRevenue(a), [619, 100, 120, 399]);
    const [deliveries] = await env.db.admin(a.accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from connector_deliveries where account_id = ${a.accountId}`,
      ),
    );
    // Every delivery but the refused one claimed (the resent checkout only once).
    assert.equal(deliveries?.n, 8);
  });
});
