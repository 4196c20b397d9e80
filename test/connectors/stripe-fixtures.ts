/*
 * Stripe webhook deliveries written out by hand in the shapes of Stripe's API reference (objects
 * trimmed to the fields a real delivery carries that matter here, plus a few that do not, as Stripe
 * sends them):
 *
 * - The Event object:             https://docs.stripe.com/api/events/object
 * - Checkout Session object:      https://docs.stripe.com/api/checkout/sessions/object
 *   (`line_items` is not included in webhook payloads; it is expandable only through the API)
 * - Invoice object:               https://docs.stripe.com/api/invoices/object
 * - Invoice Line Item object:     https://docs.stripe.com/api/invoice-line-item/object
 *   (`pricing.price_details.product` since API version 2025-03-31)
 * - Charge object:                https://docs.stripe.com/api/charges/object
 * - Refund object:                https://docs.stripe.com/api/refunds/object
 * - Dispute object:               https://docs.stripe.com/api/disputes/object
 * - Minor units, zero-decimal:    https://docs.stripe.com/currencies#zero-decimal
 * - Signatures (Stripe-Signature) https://docs.stripe.com/webhooks#verify-events
 *
 * Unix timestamps are in March 2026, the tests' clock month.
 */

const API_VERSION = "2025-10-29.clover";
const T = (day: number, hour = 12) => Math.floor(Date.UTC(2026, 2, day, hour) / 1000);

function event(id: string, type: string, created: number, object: Record<string, unknown>) {
  return {
    id,
    object: "event",
    api_version: API_VERSION,
    created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** Ann pays 499.00 EUR through Checkout (payment mode); the site put UTM and product in metadata. */
export const checkoutCompleted = event("evt_1AnnCheckout", "checkout.session.completed", T(3), {
  id: "cs_test_a1Ann",
  object: "checkout.session",
  amount_subtotal: 49900,
  amount_total: 49900,
  client_reference_id: null,
  created: T(3, 11),
  currency: "eur",
  customer: "cus_Ann",
  customer_details: {
    address: { city: null, country: "FR", line1: null, line2: null, postal_code: null, state: null },
    email: "Ann.Buyer@Example.com",
    name: "Ann Buyer",
    phone: null,
    tax_exempt: "none",
    tax_ids: [],
  },
  customer_email: null,
  expires_at: T(4, 11),
  invoice: null,
  livemode: false,
  metadata: {
    product_key: "prod_Course",
    product_name: "Video course",
    utm_source: "newsletter",
    utm_medium: "email",
    utm_campaign: "spring",
  },
  mode: "payment",
  payment_intent: "pi_3AnnPay",
  payment_link: null,
  payment_status: "paid",
  status: "complete",
  subscription: null,
  success_url: "https://shop.example.com/thanks",
  total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
});

/** The charge of Ann's checkout payment: the same payment intent, so the same sale. */
export const annChargeSucceeded = event("evt_3AnnCharge", "charge.succeeded", T(3), {
  id: "ch_3AnnCharge",
  object: "charge",
  amount: 49900,
  amount_captured: 49900,
  amount_refunded: 0,
  balance_transaction: "txn_3Ann",
  billing_details: {
    address: { city: null, country: "FR", line1: null, line2: null, postal_code: null, state: null },
    email: "ann.buyer@example.com",
    name: "Ann Buyer",
    phone: null,
  },
  captured: true,
  created: T(3, 11),
  currency: "eur",
  customer: "cus_Ann",
  description: null,
  disputed: false,
  livemode: false,
  metadata: {},
  paid: true,
  payment_intent: "pi_3AnnPay",
  payment_method: "pm_Ann",
  receipt_email: null,
  refunded: false,
  status: "succeeded",
});

/** 100.00 EUR of Ann's 499.00 refunded: the charge's cumulative `amount_refunded`. */
export const annChargeRefunded = event("evt_3AnnRefunded", "charge.refunded", T(10), {
  ...annChargeSucceeded.data.object,
  amount_refunded: 10000,
  refunded: false,
});

/** The Refund object of that refund (its own event since 2024 API versions). */
export const annRefundCreated = event("evt_3AnnRefundCreated", "refund.created", T(10), {
  id: "re_3AnnRefund",
  object: "refund",
  amount: 10000,
  balance_transaction: "txn_3AnnRefund",
  charge: "ch_3AnnCharge",
  created: T(10),
  currency: "eur",
  destination_details: {
    card: { reference_status: "pending", reference_type: "acquirer_reference_number", type: "refund" },
    type: "card",
  },
  metadata: {},
  payment_intent: "pi_3AnnPay",
  reason: "requested_by_customer",
  receipt_number: null,
  source_transfer_reversal: null,
  status: "succeeded",
  transfer_reversal: null,
});

/** Bob's subscription starts: ¥5,000 (JPY is zero-decimal: 5000 is 5,000 yen, not 50). */
export const bobInvoicePaid = event("evt_1BobInvoice", "invoice.paid", T(5), {
  id: "in_1BobInv",
  object: "invoice",
  account_country: "JP",
  amount_due: 5000,
  amount_paid: 5000,
  amount_remaining: 0,
  attempt_count: 1,
  attempted: true,
  billing_reason: "subscription_create",
  collection_method: "charge_automatically",
  created: T(5, 9),
  currency: "jpy",
  customer: "cus_Bob",
  customer_email: "bob@example.com",
  customer_name: "Bob Tanaka",
  customer_phone: null,
  lines: {
    object: "list",
    data: [
      {
        id: "il_1BobLine",
        object: "line_item",
        amount: 5000,
        currency: "jpy",
        description: "1 × Coaching (at ¥5,000 / month)",
        invoice: "in_1BobInv",
        metadata: {},
        parent: {
          type: "subscription_item_details",
          subscription_item_details: {
            invoice_item: null,
            proration: false,
            proration_details: { credited_items: null },
            subscription: "sub_1Bob",
            subscription_item: "si_1Bob",
          },
        },
        period: { end: T(31, 9), start: T(5, 9) },
        pricing: {
          price_details: { price: "price_1Coaching", product: "prod_Coaching" },
          type: "price_details",
          unit_amount_decimal: "5000",
        },
        quantity: 1,
      },
    ],
    has_more: false,
    total_count: 1,
    url: "/v1/invoices/in_1BobInv/lines",
  },
  livemode: false,
  metadata: {},
  parent: {
    quote_details: null,
    subscription_details: { metadata: {}, subscription: "sub_1Bob" },
    type: "subscription_details",
  },
  status: "paid",
  status_transitions: {
    finalized_at: T(5, 9),
    marked_uncollectible_at: null,
    paid_at: T(5, 10),
    voided_at: null,
  },
  total: 5000,
});

/** Cara pays 120.00 EUR by a direct PaymentIntent (no Checkout): the charge alone records it. */
export const caraChargeSucceeded = event("evt_3CaraCharge", "charge.succeeded", T(7), {
  ...annChargeSucceeded.data.object,
  id: "ch_3CaraCharge",
  amount: 12000,
  amount_captured: 12000,
  billing_details: {
    address: { city: null, country: "DE", line1: null, line2: null, postal_code: null, state: null },
    email: "cara@example.com",
    name: "Cara Diaz",
    phone: null,
  },
  created: T(7),
  customer: "cus_Cara",
  metadata: {
    product_key: "prod_Ebook",
    product_name: "E-book",
    utm_source: "newsletter",
    utm_campaign: "spring",
  },
  payment_intent: "pi_3CaraPay",
});

const caraDispute = {
  id: "dp_1CaraDispute",
  object: "dispute",
  amount: 12000,
  balance_transactions: [],
  charge: "ch_3CaraCharge",
  created: T(12),
  currency: "eur",
  evidence_details: { due_by: T(22), has_evidence: false, past_due: false, submission_count: 0 },
  is_charge_refundable: false,
  livemode: false,
  metadata: {},
  payment_intent: "pi_3CaraPay",
  reason: "fraudulent",
  status: "needs_response",
};

/** Cara's bank disputes the 120.00 EUR… */
export const caraDisputeCreated = event(
  "evt_1CaraDisputeCreated",
  "charge.dispute.created",
  T(12),
  caraDispute,
);

/** …and the seller wins it: the dispute is reversed. */
export const caraDisputeClosedWon = event("evt_1CaraDisputeClosed", "charge.dispute.closed", T(20), {
  ...caraDispute,
  evidence_details: { ...caraDispute.evidence_details, has_evidence: true, submission_count: 1 },
  status: "won",
});

/** An event type the connector does not use: acknowledged, ignored. */
export const customerCreated = event("evt_1CustomerCreated", "customer.created", T(2), {
  id: "cus_Ann",
  object: "customer",
  created: T(2),
  email: "ann.buyer@example.com",
  metadata: {},
  name: "Ann Buyer",
});
