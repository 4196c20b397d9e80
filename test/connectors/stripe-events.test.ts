import assert from "node:assert/strict";
import { test } from "node:test";
import { fromMinorUnits, stripeCurrency } from "../../src/connectors/stripe-amounts.ts";
import { stripeAction } from "../../src/connectors/stripe-events.ts";
import { annChargeSucceeded, bobInvoicePaid, checkoutCompleted } from "./stripe-fixtures.ts";

const envelope = (e: { id: string; type: string; created: number; data: { object: object } }) => ({
  id: e.id,
  type: e.type,
  created: e.created,
  object: structuredClone(e.data.object) as Record<string, unknown>,
});

test("minor units: two-decimal, zero-decimal and three-decimal currencies (docs.stripe.com/currencies)", () => {
  assert.equal(fromMinorUnits(1999, "USD"), 19.99);
  assert.equal(fromMinorUnits(49900, "EUR"), 499);
  assert.equal(fromMinorUnits(5000, "JPY"), 5000);
  assert.equal(fromMinorUnits(12345, "KRW"), 12345);
  assert.equal(fromMinorUnits(700, "XOF"), 700);
  assert.equal(fromMinorUnits(1230, "KWD"), 1.23);
  // ISK and HUF are written as two-decimal amounts in the API (Stripe's special cases).
  assert.equal(fromMinorUnits(50000, "ISK"), 500);
  assert.equal(stripeCurrency("jpy"), "JPY");
  assert.equal(stripeCurrency("euro"), null);
  assert.equal(stripeCurrency(null), null);
});

test("checkout in subscription or setup mode, or not paid yet, is left to invoice.paid", () => {
  for (const change of [{ mode: "subscription" }, { mode: "setup" }, { payment_status: "unpaid" }]) {
    const e = envelope(checkoutCompleted);
    Object.assign(e.object, change);
    assert.equal(stripeAction(e).kind, "ignored", JSON.stringify(change));
  }
});

test("a checkout's line items, when present, name the product (largest line)", () => {
  const e = envelope(checkoutCompleted);
  e.object.line_items = {
    object: "list",
    data: [
      {
        id: "li_1",
        amount_total: 900,
        description: "Sticker",
        price: { id: "price_s", product: "prod_Sticker" },
      },
      {
        id: "li_2",
        amount_total: 49000,
        description: "Video course",
        price: { id: "price_c", product: "prod_Video" },
      },
    ],
  };
  const action = stripeAction(e);
  assert.equal(action.kind, "sale");
  if (action.kind === "sale") {
    assert.equal(action.event.product_key, "prod_Video");
    assert.equal(action.event.product_name, "Video course");
    assert.equal(action.weak, false);
  }
});

test("invoices: renewals are payments; zero invoices ignored; the payment intent keys the sale when named", () => {
  const renewal = envelope(bobInvoicePaid);
  renewal.object.billing_reason = "subscription_cycle";
  const a = stripeAction(renewal);
  assert.equal(a.kind === "sale" && a.event.event_type, "payment");

  const trial = envelope(bobInvoicePaid);
  trial.object.amount_paid = 0;
  assert.equal(stripeAction(trial).kind, "ignored");

  // API versions before 2025-03-31 name the payment intent on the invoice: its charge merges into it.
  const older = envelope(bobInvoicePaid);
  older.object.payment_intent = "pi_OldBob";
  const b = stripeAction(older);
  assert.equal(b.kind === "sale" && b.event.id, "stripe:pi_OldBob");
  // Current versions: through the invoice's payments list when it is included.
  const current = envelope(bobInvoicePaid);
  current.object.payments = {
    object: "list",
    data: [{ id: "inpay_1", payment: { type: "payment_intent", payment_intent: "pi_NewBob" } }],
  };
  const c = stripeAction(current);
  assert.equal(c.kind === "sale" && c.event.id, "stripe:pi_NewBob");
});

test("charges: weak (never replace a checkout's or invoice's sale); an invoice's charge is left to the invoice", () => {
  const a = stripeAction(envelope(annChargeSucceeded));
  assert.equal(a.kind === "sale" && a.weak, true);
  assert.equal(a.kind === "sale" && a.event.id, "stripe:pi_3AnnPay");
  const ofInvoice = envelope(annChargeSucceeded);
  ofInvoice.object.invoice = "in_1BobInv";
  assert.equal(stripeAction(ofInvoice).kind, "ignored");
  const failed = envelope(annChargeSucceeded);
  failed.object.status = "failed";
  failed.object.paid = false;
  assert.equal(stripeAction(failed).kind, "ignored");
});
