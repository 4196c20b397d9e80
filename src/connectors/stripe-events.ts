import type { CrmEvent } from "../ingest/crm-event.ts";
import { fromMinorUnits, stripeCurrency } from "./stripe-amounts.ts";

/*
 * What a Stripe event becomes (docs/connectors.md "Stripe"). Pure: the route stores the result.
 *
 * One payment is one sale. Its event id is the payment's key: `stripe:<payment intent id>` when the
 * payload names one (Checkout in payment mode, charges, invoices of API versions that name it),
 * else `stripe:<invoice id>` or `stripe:<charge id>`. Checkout sessions and invoices describe the
 * purchase (products); a charge only the money. So a checkout session or an invoice always writes
 * its sale, replacing what its charge wrote under the same key, and a charge writes only when no
 * sale of that key exists yet. Checkout sessions in subscription mode are left to `invoice.paid`
 * (the subscription's first invoice), and a charge that names its invoice to that invoice.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json => (isObject(v) ? v : {});
const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);
/** An expandable field: the id, or the expanded object's id. */
const idOf = (v: unknown): string | null => str(v) ?? str(obj(v).id);
const list = (v: unknown): Json[] => {
  const data = obj(v).data;
  return Array.isArray(data) ? data.filter(isObject) : [];
};
const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

export interface StripeEventEnvelope {
  id: string;
  type: string;
  created: number;
  object: Json;
}

/** A sale or payment: `weak` when only a charge saw it (it never replaces a richer record). */
export interface SaleAction {
  kind: "sale";
  event: CrmEvent;
  weak: boolean;
}

/**
 * A refund or dispute of a stored sale, found by `saleIds` (its contact and product are the
 * sale's). `onlyIfAbsent`: a refund object's own amount is written only while the charge's
 * cumulative total (charge.refunded) has not been.
 */
export interface AdjustmentAction {
  kind: "adjustment";
  id: string;
  status: "refunded" | "disputed";
  saleIds: string[];
  at: string;
  amount: number;
  currency: string | null;
  cancelledAt: string | null;
  onlyIfAbsent: boolean;
  /** The payer as the payload names them, for an adjustment whose sale is not stored. */
  email: string | null;
  name: string | null;
}

export type StripeAction = SaleAction | AdjustmentAction | { kind: "ignored"; reason: string };

const ignored = (reason: string): StripeAction => ({ kind: "ignored", reason });

/** UTM parameters a site passes in the object's metadata (Checkout `metadata`, PaymentIntent metadata). */
function utmOf(metadata: Json): Partial<CrmEvent> {
  const utm: Partial<CrmEvent> = {};
  for (const name of ["utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term"] as const) {
    const value = str(metadata[name]);
    if (value) utm[name] = value.slice(0, 500);
  }
  return utm;
}

interface Product {
  key: string | null;
  name: string | null;
}

/** The purchase's product: the line with the largest amount (the metadata's when no line is sent). */
function productOf(lines: Json[], metadata: Json, amountField: string): Product {
  let best: { line: Json; amount: number } | null = null;
  for (const line of lines) {
    const amount = int(line[amountField]) ?? 0;
    if (!best || amount > best.amount) best = { line, amount };
  }
  if (best) {
    const line = best.line;
    const price = obj(line.price);
    const key =
      str(obj(obj(line.pricing).price_details).product) ??
      idOf(price.product) ??
      idOf(obj(line.plan).product) ??
      idOf(price.id);
    const name = str(line.description) ?? str(obj(price.product).name) ?? str(price.nickname);
    if (key || name) return { key: key?.slice(0, 200) ?? null, name: name?.slice(0, 200) ?? null };
  }
  return {
    key: str(metadata.product_key)?.slice(0, 200) ?? null,
    name: str(metadata.product_name)?.slice(0, 200) ?? null,
  };
}

function saleEvent(
  id: string,
  type: "sale" | "payment",
  at: number,
  amountMinor: number,
  currency: string,
  payer: { email: string | null; name: string | null; phone: string | null },
  product: Product,
  metadata: Json,
): CrmEvent {
  return {
    id,
    event_type: type,
    event_datetime: iso(at),
    contact_email: payer.email,
    contact_name: payer.name?.slice(0, 200) ?? null,
    contact_phone: payer.phone?.slice(0, 40) ?? null,
    amount: fromMinorUnits(amountMinor, currency),
    currency,
    product_key: product.key,
    product_name: product.name,
    is_paid: true,
    payment_status: "paid",
    ...utmOf(metadata),
  };
}

function checkoutCompleted(e: StripeEventEnvelope): StripeAction {
  const s = e.object;
  if (str(s.mode) !== "payment")
    return ignored("subscription and setup sessions: invoice.paid records the sale");
  if (str(s.payment_status) !== "paid") return ignored("not paid yet");
  const currency = stripeCurrency(s.currency);
  const total = int(s.amount_total);
  if (!currency || total === null) return ignored("no amount");
  const details = obj(s.customer_details);
  const key = idOf(s.payment_intent) ?? str(s.id);
  if (!key) return ignored("no id");
  const metadata = obj(s.metadata);
  return {
    kind: "sale",
    weak: false,
    event: saleEvent(
      `stripe:${key}`,
      "sale",
      e.created,
      total,
      currency,
      {
        email: str(details.email) ?? str(s.customer_email),
        name: str(details.name),
        phone: str(details.phone),
      },
      productOf(list(s.line_items), metadata, "amount_total"),
      metadata,
    ),
  };
}

/** The invoice's payment intent: `payment_intent` (API versions before 2025-03-31), else its payments list. */
function invoicePaymentIntent(invoice: Json): string | null {
  const direct = idOf(invoice.payment_intent);
  if (direct) return direct;
  for (const payment of list(invoice.payments)) {
    const pi = idOf(obj(payment.payment).payment_intent);
    if (pi) return pi;
  }
  return null;
}

function invoicePaid(e: StripeEventEnvelope): StripeAction {
  const inv = e.object;
  const currency = stripeCurrency(inv.currency);
  const paid = int(inv.amount_paid);
  if (!currency || paid === null) return ignored("no amount");
  if (paid <= 0) return ignored("nothing paid (a trial or a zero invoice)");
  const key = invoicePaymentIntent(inv) ?? str(inv.id);
  if (!key) return ignored("no id");
  const paidAt = int(obj(inv.status_transitions).paid_at) ?? e.created;
  // A subscription's renewals are payments of the purchase its first invoice made.
  const type = str(inv.billing_reason) === "subscription_cycle" ? "payment" : "sale";
  const metadata = obj(inv.metadata);
  return {
    kind: "sale",
    weak: false,
    event: saleEvent(
      `stripe:${key}`,
      type,
      paidAt,
      paid,
      currency,
      { email: str(inv.customer_email), name: str(inv.customer_name), phone: str(inv.customer_phone) },
      productOf(list(inv.lines), metadata, "amount"),
      metadata,
    ),
  };
}

function chargeSucceeded(e: StripeEventEnvelope): StripeAction {
  const ch = e.object;
  if (idOf(ch.invoice)) return ignored("an invoice's charge: invoice.paid records the sale");
  if (ch.paid !== true || str(ch.status) !== "succeeded") return ignored("not paid");
  const currency = stripeCurrency(ch.currency);
  const captured = int(ch.amount_captured) || int(ch.amount);
  if (!currency || captured === null) return ignored("no amount");
  const key = idOf(ch.payment_intent) ?? str(ch.id);
  if (!key) return ignored("no id");
  const billing = obj(ch.billing_details);
  const metadata = obj(ch.metadata);
  return {
    kind: "sale",
    weak: true,
    event: saleEvent(
      `stripe:${key}`,
      "sale",
      int(ch.created) ?? e.created,
      captured,
      currency,
      {
        email: str(billing.email) ?? str(ch.receipt_email),
        name: str(billing.name),
        phone: str(billing.phone),
      },
      productOf([], metadata, "amount"),
      metadata,
    ),
  };
}

/** The ids a payment's sale may be stored under, most specific first. */
function saleIdsOf(paymentIntent: string | null, charge: string | null): string[] {
  return [paymentIntent, charge].flatMap((id) => (id ? [`stripe:${id}`] : []));
}

function chargeRefunded(e: StripeEventEnvelope): StripeAction {
  const ch = e.object;
  const chargeId = str(ch.id);
  const currency = stripeCurrency(ch.currency);
  const refunded = int(ch.amount_refunded);
  if (!chargeId || !currency || refunded === null) return ignored("no amount");
  const billing = obj(ch.billing_details);
  return {
    kind: "adjustment",
    id: `stripe:refund:${chargeId}`,
    status: "refunded",
    saleIds: saleIdsOf(idOf(ch.payment_intent), chargeId),
    at: iso(e.created),
    // The charge's refunded total: partial refunds of one charge add up in one record.
    amount: fromMinorUnits(refunded, currency),
    currency,
    cancelledAt: refunded === 0 ? iso(e.created) : null,
    onlyIfAbsent: false,
    email: str(billing.email) ?? str(ch.receipt_email),
    name: str(billing.name),
  };
}

function refundEvent(e: StripeEventEnvelope): StripeAction {
  const r = e.object;
  const chargeId = idOf(r.charge);
  const currency = stripeCurrency(r.currency);
  const amount = int(r.amount);
  if (!chargeId || !currency || amount === null) return ignored("a refund without its charge");
  const status = str(r.status);
  if (status === "failed" || status === "canceled") return ignored("a refund that did not happen");
  return {
    kind: "adjustment",
    id: `stripe:refund:${chargeId}`,
    status: "refunded",
    saleIds: saleIdsOf(idOf(r.payment_intent), chargeId),
    at: iso(int(r.created) ?? e.created),
    amount: fromMinorUnits(amount, currency),
    currency,
    cancelledAt: null,
    onlyIfAbsent: true,
    email: null,
    name: null,
  };
}

/** Dispute statuses that end with the money back with the seller: the dispute is reversed. */
const REVERSED = new Set(["won", "warning_closed", "prevented"]);

function disputeEvent(e: StripeEventEnvelope): StripeAction {
  const d = e.object;
  const id = str(d.id);
  const currency = stripeCurrency(d.currency);
  const amount = int(d.amount);
  if (!id || !currency || amount === null) return ignored("no amount");
  const status = str(d.status) ?? "";
  return {
    kind: "adjustment",
    id: `stripe:${id}`,
    status: "disputed",
    saleIds: saleIdsOf(idOf(d.payment_intent), idOf(d.charge)),
    at: iso(int(d.created) ?? e.created),
    amount: fromMinorUnits(amount, currency),
    currency,
    cancelledAt: REVERSED.has(status) ? iso(e.created) : null,
    onlyIfAbsent: false,
    email: null,
    name: null,
  };
}

export function stripeAction(e: StripeEventEnvelope): StripeAction {
  if (e.type === "checkout.session.completed" || e.type === "checkout.session.async_payment_succeeded")
    return checkoutCompleted(e);
  if (e.type === "invoice.paid") return invoicePaid(e);
  if (e.type === "charge.succeeded") return chargeSucceeded(e);
  if (e.type === "charge.refunded") return chargeRefunded(e);
  if (e.type === "refund.created" || e.type === "refund.updated") return refundEvent(e);
  if (e.type.startsWith("charge.dispute.")) return disputeEvent(e);
  return ignored(`event type ${e.type} is not used`);
}
