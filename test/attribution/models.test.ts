import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  creditSales,
  type ModelName,
  type ModelRequest,
  type SaleJourney,
} from "../../src/attribution/models/credit.ts";
import type { ModelTouch } from "../../src/attribution/models/journey.ts";
import { markovAttribution } from "../../src/attribution/models/markov.ts";
import { shapleyShares } from "../../src/attribution/models/shapley.ts";

/*
 * The models of docs/attribution.md ("Models") on journeys small enough to compute by hand; the
 * expected figures below are that hand computation, not the code's output.
 */

const DAY = 86_400_000;
const touch = (key: string, day: number, direct = false): ModelTouch => ({ key, at: day * DAY, direct });
const sale = (touches: ModelTouch[], revenue = 1000, net = 800, day = 10): SaleJourney => ({
  touches,
  at: day * DAY,
  revenue,
  net,
});
const request = (model: ModelName, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  order: 1,
  halfLifeDays: 7,
  firstWeight: 0.4,
  lastWeight: 0.4,
  ...extra,
});
/** key → [sales, revenue, net] */
function table(model: ModelRequest, sales: SaleJourney[]) {
  return Object.fromEntries(
    creditSales(model, sales).rows.map((r) => [r.key ?? "(none)", [r.sales, r.revenue, r.net]]),
  );
}

const ABC = [touch("A", 1), touch("B", 4), touch("C", 8)];

describe("rule-based models, one sale of 1000 (net 800) after A (day 1), B (day 4), C (day 8)", () => {
  test("first touch: all to A", () => {
    assert.deepEqual(table(request("first_touch"), [sale(ABC)]), { A: [1, 1000, 800] });
  });
  test("last touch: all to C", () => {
    assert.deepEqual(table(request("last_touch"), [sale(ABC)]), { C: [1, 1000, 800] });
  });
  test("linear: a third each, the spare unit to the first by largest remainder", () => {
    assert.deepEqual(table(request("linear"), [sale(ABC)]), {
      A: [0.3334, 333.34, 266.67],
      B: [0.3333, 333.33, 266.67],
      C: [0.3333, 333.33, 266.66],
    });
  });
  test("time decay, half-life 7 days: weights 2^(-9/7), 2^(-6/7), 2^(-2/7) normalised", () => {
    // 0.230102, 0.309694, 0.460204 of the sale; of 1000: 230.10, 309.69, 460.20 (+1 cent to B);
    // of 800: 184.08, 247.76 (+1 cent), 368.16.
    assert.deepEqual(table(request("time_decay"), [sale(ABC)]), {
      A: [0.2301, 230.1, 184.08],
      B: [0.3097, 309.7, 247.76],
      C: [0.4602, 460.2, 368.16],
    });
  });
  test("position based 40/20/40, and 30/10/60 when set", () => {
    assert.deepEqual(table(request("position_based"), [sale(ABC)]), {
      A: [0.4, 400, 320],
      B: [0.2, 200, 160],
      C: [0.4, 400, 320],
    });
    assert.deepEqual(table(request("position_based", { firstWeight: 0.3, lastWeight: 0.6 }), [sale(ABC)]), {
      A: [0.3, 300, 240],
      B: [0.1, 100, 80],
      C: [0.6, 600, 480],
    });
  });
  test("position based with two touches splits in the ratio of the end weights", () => {
    assert.deepEqual(
      table(request("position_based", { firstWeight: 0.3, lastWeight: 0.6 }), [
        sale([touch("A", 1), touch("C", 8)]),
      ]),
      {
        A: [0.3333, 333.33, 266.67],
        C: [0.6667, 666.67, 533.33],
      },
    );
  });
});

describe("edge journeys", () => {
  test("a single-touch journey gives its one key everything under every model", () => {
    for (const model of [
      "first_touch",
      "last_touch",
      "last_non_direct",
      "linear",
      "time_decay",
      "position_based",
      "shapley",
      "markov",
    ] as const) {
      assert.deepEqual(table(request(model), [sale([touch("A", 3)])]), { A: [1, 1000, 800] }, model);
    }
  });
  test("ties in time share their position: A and B both first, C last", () => {
    const tied = [touch("B", 1), touch("A", 1), touch("C", 8)];
    assert.deepEqual(table(request("first_touch"), [sale(tied)]), { A: [0.5, 500, 400], B: [0.5, 500, 400] });
    assert.deepEqual(table(request("last_touch"), [sale(tied)]), { C: [1, 1000, 800] });
    // Two positions: the first (A, B) takes 0.4 / 0.8 of the sale, shared; the last the other half.
    assert.deepEqual(table(request("position_based"), [sale(tied)]), {
      A: [0.25, 250, 200],
      B: [0.25, 250, 200],
      C: [0.5, 500, 400],
    });
    // Every touch at one instant: one position, equal shares.
    assert.deepEqual(table(request("last_touch"), [sale([touch("A", 2), touch("B", 2)])]), {
      A: [0.5, 500, 400],
      B: [0.5, 500, 400],
    });
  });
  test("last non-direct skips a later direct visit; all-direct journeys keep the credit on direct", () => {
    assert.deepEqual(
      table(request("last_non_direct"), [sale([touch("email", 1), touch("direct", 5, true)])]),
      {
        email: [1, 1000, 800],
      },
    );
    assert.deepEqual(table(request("last_non_direct"), [sale([touch("direct", 5, true)])]), {
      direct: [1, 1000, 800],
    });
  });
  test("a sale without a touch in the look-back goes to (none), never dropped", () => {
    assert.deepEqual(table(request("linear"), [sale([touch("A", 2)], 500, 500), sale([], 300, 100)]), {
      A: [1, 500, 500],
      "(none)": [1, 300, 100],
    });
  });
  test("a refund on a split sale is netted on the same shares", () => {
    // 1000 sold, 300 refunded: each of two touches gets 500 of revenue and 350 of net.
    assert.deepEqual(table(request("linear"), [sale([touch("A", 1), touch("B", 2)], 1000, 700)]), {
      A: [0.5, 500, 350],
      B: [0.5, 500, 350],
    });
  });
});

describe("Markov removal effect", () => {
  test("Puzyrov's worked example (2019): removal effects 0.75 and 0.5, credit 2.4 and 1.6", () => {
    // S. Puzyrov, "Markov Chain Attribution – Simple Explanation Of Removal Effect" (2019,
    // serhiipuzyrov.com): paths Google Ads → conv ×2, Mailing → conv ×1, Google Ads > Mailing → conv
    // ×1, Google Ads → null ×1. Transitions start→G 0.8, start→M 0.2, G→conv 0.5, G→M 0.25,
    // G→null 0.25, M→conv 1. P(conv) = 0.8 × 0.75 + 0.2 = 0.8; without G 0.2, without M 0.4.
    const fit = markovAttribution(
      [
        { keys: ["google ads"], conversions: 2, nulls: 0 },
        { keys: ["mailing"], conversions: 1, nulls: 0 },
        { keys: ["google ads", "mailing"], conversions: 1, nulls: 0 },
        { keys: ["google ads"], conversions: 0, nulls: 1 },
      ],
      1,
    );
    assert.ok(Math.abs(fit.conversionProbability - 0.8) < 1e-12);
    assert.ok(Math.abs((fit.removalEffects.get("google ads") ?? 0) - 0.75) < 1e-12);
    assert.ok(Math.abs((fit.removalEffects.get("mailing") ?? 0) - 0.5) < 1e-12);
    const sales = [
      sale([touch("google ads", 1)], 100, 100),
      sale([touch("google ads", 1)], 100, 100),
      sale([touch("mailing", 1)], 100, 100),
      sale([touch("google ads", 1), touch("mailing", 2)], 100, 100),
    ];
    const credit = creditSales(request("markov"), sales, [
      { keys: ["google ads"], conversions: 0, nulls: 1 },
    ]);
    assert.deepEqual(
      credit.rows.map((r) => [r.key, r.sales, r.revenue]),
      [
        ["google ads", 2.4, 240],
        ["mailing", 1.6, 160],
      ],
    );
    assert.equal(credit.pathsUsed, 5);
  });
  test("second order sees that B converts only after A", () => {
    const paths = [
      { keys: ["A", "B"], conversions: 1, nulls: 0 },
      { keys: ["C", "B"], conversions: 0, nulls: 1 },
    ];
    // First order: P = 0.5; without A 0.25, without C 0.25, without B 0 → 0.5, 0.5, 1 → 1/4, 1/4, 1/2.
    const first = markovAttribution(paths, 1);
    assert.deepEqual(
      [...first.shares].map(([k, v]) => [k, Number(v.toFixed(12))]),
      [
        ["A", 0.25],
        ["B", 0.5],
        ["C", 0.25],
      ],
    );
    // Second order: states (A) (A,B) (C) (C,B); without A nothing converts, without C nothing changes.
    const second = markovAttribution(paths, 2);
    assert.deepEqual(
      [...second.shares].map(([k, v]) => [k, Number(v.toFixed(12))]),
      [
        ["A", 0.5],
        ["B", 0.5],
      ],
    );
  });
  test("repeated keys in a row count once, loops converge", () => {
    const fit = markovAttribution(
      [
        { keys: ["A", "A", "B", "A"], conversions: 1, nulls: 0 },
        { keys: ["B", "A", "B"], conversions: 0, nulls: 1 },
      ],
      1,
    );
    // Collapsed: A>B>A conv, B>A>B null. start→A ½, start→B ½; A→B ⅔, A→conv ⅓; B→A 1 (two walks),
    // B→null… B: out A ×2 (from the first and second path), null ×1 → A ⅔, null ⅓.
    // x_A = ⅔ x_B + ⅓, x_B = ⅔ x_A → x_A = ⅓ / (1 − 4/9) = 3/5, x_B = 2/5; P = ½ (3/5 + 2/5) = ½.
    assert.ok(Math.abs(fit.conversionProbability - 0.5) < 1e-10);
  });
});

describe("Shapley", () => {
  test("the worked example of 'Data-driven marketing attribution' (Towards Data Science): F 45.5, O 20.5, L 34 of 100", () => {
    // Conversions by touched set: F 20, O 10, L 17, F+O 17, F+L 30, L+O 0, F+L+O 6; v(S) sums the
    // sets included in S (v(F,L,O) = 100). Published Shapley values: F 0.455, O 0.205, L 0.34.
    const sets: [string[], number][] = [
      [["F"], 20],
      [["O"], 10],
      [["L"], 17],
      [["F", "O"], 17],
      [["F", "L"], 30],
      [["F", "L", "O"], 6],
    ];
    const sales = sets.flatMap(([keys, n]) =>
      Array.from({ length: n }, () =>
        sale(
          keys.map((k, i) => touch(k, i + 1)),
          1,
          1,
        ),
      ),
    );
    assert.deepEqual(table(request("shapley"), sales), {
      F: [45.5, 45.5, 45.5],
      L: [34, 34, 34],
      O: [20.5, 20.5, 20.5],
    });
  });
  test("the closed form equals the definition over every coalition (random games, up to 6 keys)", () => {
    const keys = ["a", "b", "c", "d", "e", "f"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.subarray(keys, { minLength: 1 }), fc.integer({ min: 1, max: 5 })), {
          maxLength: 12,
        }),
        (journeys) => {
          const players = [...new Set(journeys.flatMap(([k]) => k))].sort();
          const worth = (coalition: Set<string>) =>
            journeys.reduce((v, [k, n]) => (k.every((x) => coalition.has(x)) ? v + n : v), 0);
          const n = players.length;
          const factorial = (m: number): number => (m <= 1 ? 1 : m * factorial(m - 1));
          for (const player of players) {
            const others = players.filter((p) => p !== player);
            let value = 0;
            for (let mask = 0; mask < 1 << others.length; mask++) {
              const s = new Set(others.filter((_, i) => mask & (1 << i)));
              const weight = (factorial(s.size) * factorial(n - s.size - 1)) / factorial(n);
              value += weight * (worth(new Set([...s, player])) - worth(s));
            }
            let closed = 0;
            for (const [k, count] of journeys) closed += (shapleyShares(k).get(player) ?? 0) * count;
            assert.ok(Math.abs(value - closed) < 1e-9, `${player}: ${value} vs ${closed}`);
          }
        },
      ),
    );
  });
});

describe("every model keeps the totals (random journey sets)", () => {
  const models: ModelName[] = [
    "first_touch",
    "last_touch",
    "last_non_direct",
    "linear",
    "time_decay",
    "position_based",
    "markov",
    "shapley",
  ];
  const journey = fc.record({
    touches: fc.array(
      fc.record({
        key: fc.constantFrom("A", "B", "C", "D"),
        day: fc.integer({ min: 0, max: 9 }),
        direct: fc.boolean(),
      }),
      { maxLength: 6 },
    ),
    revenueCents: fc.integer({ min: 0, max: 500_000 }),
    refundCents: fc.integer({ min: 0, max: 100_000 }),
  });
  test("Σ credited sales = counted sales, Σ revenue and Σ net to the cent", () => {
    fc.assert(
      fc.property(
        fc.array(journey, { minLength: 1, maxLength: 30 }),
        fc.constantFrom(...models),
        fc.integer({ min: 1, max: 3 }),
        (journeys, model, order) => {
          const sales = journeys.map((j) =>
            sale(
              j.touches.map((t) => touch(t.key, t.day, t.direct)),
              j.revenueCents / 100,
              (j.revenueCents - j.refundCents) / 100,
            ),
          );
          const rows = creditSales(request(model, { order }), sales).rows;
          const sum = (pick: (r: (typeof rows)[number]) => number) =>
            Math.round(rows.reduce((a, r) => a + pick(r), 0) * 100);
          assert.equal(Math.round(rows.reduce((a, r) => a + r.sales, 0) * 10_000), sales.length * 10_000);
          assert.equal(
            sum((r) => r.revenue),
            journeys.reduce((a, j) => a + j.revenueCents, 0),
          );
          assert.equal(
            sum((r) => r.net),
            journeys.reduce((a, j) => a + j.revenueCents - j.refundCents, 0),
          );
          for (const r of rows) assert.ok(r.sales >= 0 && r.sales <= sales.length, `${model}: ${r.sales}`);
        },
      ),
    );
  });
});
