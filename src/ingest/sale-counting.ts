import { z } from "zod";

/**
 * The sale rule (DESIGN §6, docs/metrics.md "Sale counting"): which sale-type events count as
 * sales, and how repeats of one purchase (installments, duplicate CRM entries) collapse into one.
 */
export const saleRuleSchema = z
  .object({
    /** Event types that can open (count as) a sale; the others only join groups. */
    source: z.enum(["sale", "payment", "both"]),
    /** What makes two events the same purchase. */
    dedupe: z.enum(["contact_product", "contact", "none"]),
    /** An event joins a group started at most this many days before it. */
    window_days: z.number().int().min(0).max(3650),
    /** The field a group's revenue sums. */
    revenue: z.enum(["amount", "value"]),
    /** Baseline events (customers from before tracking) never count. */
    exclude_baseline: z.boolean(),
  })
  .strict();

export type SaleRule = z.infer<typeof saleRuleSchema>;

export const DEFAULT_SALE_RULE: SaleRule = Object.freeze({
  source: "both",
  dedupe: "contact_product",
  window_days: 30,
  revenue: "amount",
  exclude_baseline: true,
});

/** One sale or payment event of a contact, as sale counting needs it. */
export interface SaleEvent {
  id: string;
  event_type: "sale" | "payment";
  /** Epoch milliseconds. */
  at: number;
  product_key: string | null;
  amount: number | null;
  value: number | null;
  is_paid: boolean | null;
  /** `paid`, `refunded`, `disputed`, `pending`, `failed`… (payments). */
  payment_status: string | null;
  is_baseline: boolean;
  cancelled: boolean;
}

export type DropReason = "baseline" | "cancelled" | "duplicate" | "source" | "adjustment";

export interface SaleCount {
  id: string;
  counted: boolean;
  drop_reason: DropReason | null;
  group_key: string | null;
  /** Rank among the contact's sale-type events, in time order, from 1. */
  contact_seq: number;
}

export interface SaleGroup {
  group_key: string;
  counted: boolean;
  /** Sum of the group's paid amounts (rule.revenue). */
  revenue: number;
  refunds: number;
  disputes: number;
}

const DAY_MS = 86_400_000;

function isAdjustment(e: SaleEvent): boolean {
  return e.payment_status === "refunded" || e.payment_status === "disputed";
}

/** A sale event is paid unless it says otherwise; a payment is paid when its status or flag says so. */
function isPaid(e: SaleEvent): boolean {
  if (e.payment_status !== null) return e.payment_status === "paid";
  if (e.is_paid !== null) return e.is_paid;
  return e.event_type === "sale";
}

function canOpen(e: SaleEvent, rule: SaleRule): boolean {
  return rule.source === "both" || rule.source === e.event_type;
}

/**
 * Counts one contact's sale-type events under a rule. Events are taken in time order (id breaks
 * ties). Pure: the same events and rule always give the same answer, so a recompute after a rule
 * change is this function run again.
 */
export function countSales(
  contactKey: string,
  events: readonly SaleEvent[],
  rule: SaleRule,
): { counts: SaleCount[]; groups: SaleGroup[] } {
  const ordered = [...events].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const groups: SaleGroup[] = [];
  type OpenGroup = SaleGroup & { startedAt: number };
  // The latest group per dedupe key: the only one a later event can join.
  const latest = new Map<string, OpenGroup>();
  // Where refunds and disputes go: the latest group of the same product, else the contact's latest.
  const latestOfProduct = new Map<string, OpenGroup>();
  let latestOfContact: OpenGroup | null = null;
  const counts: SaleCount[] = [];

  ordered.forEach((e, index) => {
    const contact_seq = index + 1;
    const key =
      rule.dedupe === "contact_product"
        ? `${contactKey}\u0000${e.product_key ?? ""}`
        : rule.dedupe === "contact"
          ? contactKey
          : `${contactKey}\u0000${e.id}`;
    const open = latest.get(key);

    if (e.cancelled) {
      counts.push({ id: e.id, counted: false, drop_reason: "cancelled", group_key: null, contact_seq });
      return;
    }
    if (isAdjustment(e)) {
      // A refund or dispute belongs to the purchase it reverses, however long after it comes.
      const target = latestOfProduct.get(e.product_key ?? "") ?? latestOfContact;
      if (target) {
        const amount = Math.abs((rule.revenue === "amount" ? e.amount : e.value) ?? 0);
        if (e.payment_status === "refunded") target.refunds += amount;
        else target.disputes += amount;
      }
      counts.push({
        id: e.id,
        counted: false,
        drop_reason: "adjustment",
        group_key: target?.group_key ?? null,
        contact_seq,
      });
      return;
    }

    const amount = isPaid(e) ? ((rule.revenue === "amount" ? e.amount : e.value) ?? 0) : 0;
    if (open && e.at - open.startedAt <= rule.window_days * DAY_MS) {
      open.revenue += amount;
      counts.push({
        id: e.id,
        counted: false,
        drop_reason: "duplicate",
        group_key: open.group_key,
        contact_seq,
      });
      return;
    }
    if (!canOpen(e, rule)) {
      counts.push({ id: e.id, counted: false, drop_reason: "source", group_key: null, contact_seq });
      return;
    }
    // A baseline purchase still opens its group, so its own installments are not counted as new sales.
    const baseline = rule.exclude_baseline && e.is_baseline;
    const group: OpenGroup = {
      startedAt: e.at,
      group_key: e.id,
      counted: !baseline,
      revenue: amount,
      refunds: 0,
      disputes: 0,
    };
    groups.push(group);
    latest.set(key, group);
    latestOfProduct.set(e.product_key ?? "", group);
    latestOfContact = group;
    counts.push({
      id: e.id,
      counted: !baseline,
      drop_reason: baseline ? "baseline" : null,
      group_key: group.group_key,
      contact_seq,
    });
  });

  return {
    counts,
    groups: groups.map(({ group_key, counted, revenue, refunds, disputes }) => ({
      group_key,
      counted,
      revenue,
      refunds,
      disputes,
    })),
  };
}
