import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  countSales,
  DEFAULT_SALE_RULE,
  type SaleEvent,
  type SaleRule,
  saleRuleSchema,
} from "../../src/ingest/sale-counting.ts";

const day = (d: number, hour = 12) => Date.UTC(2026, 0, d, hour);

function ev(id: string, at: number, over: Partial<SaleEvent> = {}): SaleEvent {
  return {
    id,
    event_type: "sale",
    at,
    product_key: "coaching",
    amount: 1000,
    value: null,
    is_paid: null,
    payment_status: null,
    is_baseline: false,
    cancelled: false,
    ...over,
  };
}

const rule = (over: Partial<SaleRule> = {}): SaleRule => ({ ...DEFAULT_SALE_RULE, ...over });

describe("sale counting", () => {
  test("the default rule is the one DESIGN §6 names, and the schema accepts exactly its shape", () => {
    assert.deepEqual(DEFAULT_SALE_RULE, {
      source: "both",
      dedupe: "contact_product",
      window_days: 30,
      revenue: "amount",
      exclude_baseline: true,
    });
    assert.ok(saleRuleSchema.safeParse(DEFAULT_SALE_RULE).success);
    assert.equal(saleRuleSchema.safeParse({ ...DEFAULT_SALE_RULE, window_days: -1 }).success, false);
    assert.equal(saleRuleSchema.safeParse({ ...DEFAULT_SALE_RULE, extra: 1 }).success, false);
  });

  test("a sale and its installments inside the window: one counted sale, revenue = paid amounts", () => {
    const { counts, groups } = countSales(
      "c1",
      [
        ev("s1", day(1), { amount: 3000, is_paid: false }),
        ev("p1", day(2), { event_type: "payment", amount: 1000, payment_status: "paid" }),
        ev("p2", day(31, 12), { event_type: "payment", amount: 1000, payment_status: "paid" }),
        ev("p3", day(15), { event_type: "payment", amount: 1000, payment_status: "pending" }),
      ],
      rule(),
    );
    assert.deepEqual(counts, [
      { id: "s1", counted: true, drop_reason: null, group_key: "s1", contact_seq: 1 },
      { id: "p1", counted: false, drop_reason: "duplicate", group_key: "s1", contact_seq: 2 },
      { id: "p3", counted: false, drop_reason: "duplicate", group_key: "s1", contact_seq: 3 },
      { id: "p2", counted: false, drop_reason: "duplicate", group_key: "s1", contact_seq: 4 },
    ]);
    assert.deepEqual(groups, [{ group_key: "s1", counted: true, revenue: 2000, refunds: 0, disputes: 0 }]);
  });

  test("the same product again after the window is a new sale; another product is its own sale", () => {
    const { counts, groups } = countSales(
      "c1",
      [
        ev("a", day(1)),
        ev("b", day(31, 13)), // 30 days and one hour after a: outside the window
        ev("c", day(5), { product_key: "masterclass", amount: 500 }),
        ev("d", day(6), { product_key: "masterclass", amount: 500 }),
      ],
      rule(),
    );
    assert.deepEqual(counts, [
      { id: "a", counted: true, drop_reason: null, group_key: "a", contact_seq: 1 },
      { id: "c", counted: true, drop_reason: null, group_key: "c", contact_seq: 2 },
      { id: "d", counted: false, drop_reason: "duplicate", group_key: "c", contact_seq: 3 },
      { id: "b", counted: true, drop_reason: null, group_key: "b", contact_seq: 4 },
    ]);
    assert.deepEqual(
      groups.map((g) => [g.group_key, g.revenue]),
      [
        ["a", 1000],
        ["c", 1000],
        ["b", 1000],
      ],
    );
  });

  test("exactly window_days after the start still joins", () => {
    const { counts } = countSales("c1", [ev("a", day(1)), ev("b", day(31))], rule());
    assert.deepEqual(
      counts.map((c) => [c.id, c.counted, c.drop_reason]),
      [
        ["a", true, null],
        ["b", false, "duplicate"],
      ],
    );
  });

  test("baseline purchases never count, and absorb their own installments", () => {
    const { counts, groups } = countSales(
      "c1",
      [
        ev("base", day(1), { is_baseline: true }),
        ev("inst", day(10), { event_type: "payment", payment_status: "paid", amount: 200 }),
      ],
      rule(),
    );
    assert.deepEqual(counts, [
      { id: "base", counted: false, drop_reason: "baseline", group_key: "base", contact_seq: 1 },
      { id: "inst", counted: false, drop_reason: "duplicate", group_key: "base", contact_seq: 2 },
    ]);
    assert.deepEqual(groups, [{ group_key: "base", counted: false, revenue: 1200, refunds: 0, disputes: 0 }]);
    const kept = countSales(
      "c1",
      [ev("base", day(1), { is_baseline: true })],
      rule({ exclude_baseline: false }),
    );
    assert.deepEqual(kept.counts[0], {
      id: "base",
      counted: true,
      drop_reason: null,
      group_key: "base",
      contact_seq: 1,
    });
  });

  test("a cancelled sale neither counts nor holds the window: the next purchase counts", () => {
    const { counts } = countSales("c1", [ev("x", day(1), { cancelled: true }), ev("y", day(3))], rule());
    assert.deepEqual(counts, [
      { id: "x", counted: false, drop_reason: "cancelled", group_key: null, contact_seq: 1 },
      { id: "y", counted: true, drop_reason: null, group_key: "y", contact_seq: 2 },
    ]);
  });

  test("refunds and disputes join the purchase they reverse, even outside the window, and never count", () => {
    const { counts, groups } = countSales(
      "c1",
      [
        ev("s", day(1), { amount: 2000 }),
        ev("r", day(1) + 90 * 86_400_000, {
          event_type: "payment",
          payment_status: "refunded",
          amount: -500,
        }),
        ev("d", day(1) + 91 * 86_400_000, { event_type: "payment", payment_status: "disputed", amount: 300 }),
      ],
      rule(),
    );
    assert.deepEqual(counts, [
      { id: "s", counted: true, drop_reason: null, group_key: "s", contact_seq: 1 },
      { id: "r", counted: false, drop_reason: "adjustment", group_key: "s", contact_seq: 2 },
      { id: "d", counted: false, drop_reason: "adjustment", group_key: "s", contact_seq: 3 },
    ]);
    assert.deepEqual(groups, [{ group_key: "s", counted: true, revenue: 2000, refunds: 500, disputes: 300 }]);
  });

  test("source decides which events can open a sale", () => {
    const events = [
      ev("p", day(1), { event_type: "payment", payment_status: "paid", amount: 100 }),
      ev("s", day(2), { amount: 900 }),
    ];
    assert.deepEqual(
      countSales("c1", events, rule({ source: "sale" })).counts.map((c) => [
        c.id,
        c.counted,
        c.drop_reason,
        c.group_key,
      ]),
      [
        ["p", false, "source", null],
        ["s", true, null, "s"],
      ],
    );
    assert.deepEqual(
      countSales("c1", events, rule({ source: "payment" })).counts.map((c) => [
        c.id,
        c.counted,
        c.drop_reason,
        c.group_key,
      ]),
      [
        ["p", true, null, "p"],
        ["s", false, "duplicate", "p"],
      ],
    );
  });

  test("dedupe by contact merges products; none counts every event", () => {
    const events = [ev("a", day(1)), ev("b", day(2), { product_key: "other" })];
    assert.deepEqual(
      countSales("c1", events, rule({ dedupe: "contact" })).counts.map((c) => [c.id, c.counted, c.group_key]),
      [
        ["a", true, "a"],
        ["b", false, "a"],
      ],
    );
    assert.deepEqual(
      countSales("c1", [ev("a", day(1)), ev("b", day(1, 13))], rule({ dedupe: "none" })).counts.map((c) => [
        c.id,
        c.counted,
      ]),
      [
        ["a", true],
        ["b", true],
      ],
    );
  });

  test("revenue can sum value instead of amount; unpaid sales add nothing", () => {
    const { groups } = countSales(
      "c1",
      [
        ev("a", day(1), { amount: 100, value: 5000 }),
        ev("b", day(40), { amount: 100, value: 700, is_paid: false }),
      ],
      rule({ revenue: "value" }),
    );
    assert.deepEqual(
      groups.map((g) => [g.group_key, g.revenue]),
      [
        ["a", 5000],
        ["b", 0],
      ],
    );
  });

  test("order of input does not matter; ties are broken by id", () => {
    const events = [ev("b", day(1)), ev("a", day(1)), ev("c", day(2))];
    const once = countSales("c1", events, rule());
    const again = countSales("c1", [...events].reverse(), rule());
    assert.deepEqual(once, again);
    assert.deepEqual(
      once.counts.map((c) => [c.id, c.counted]),
      [
        ["a", true],
        ["b", false],
        ["c", false],
      ],
    );
  });
});
