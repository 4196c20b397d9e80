import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  looksLikeModelId,
  PNL_EXTRA_FRAGMENTS,
  REDACTED_FRAGMENTS,
  redact,
  redactRows,
  SERVICE_NAME,
} from "../../src/http/redact.ts";

// Copied by hand from SPEC "Fields never returned", so the test does not trust the module's own list.
const SPEC_FRAGMENTS = [
  "access_token",
  "refresh_token",
  "api_key",
  "apikey",
  "secret",
  "signing",
  "service_role",
  "password",
  "webhook_secret",
  "encryption",
  "tokenenc",
  "bearer",
  "model",
  "model_name",
  "provider",
  "prompt",
  "system_prompt",
  "temperature",
  "embedding",
  "cost",
  "cost_estimate",
  "token_count",
  "tokens_used",
  "price_input",
  "price_output",
  "gross_margin",
  "net_profit",
  "net_profit_after_ads",
  "wholesale",
  "markup",
  "platform_fee",
  "margin_pct",
  "agency_margin",
  "contribution_margin",
];
const SPEC_PNL_FRAGMENTS = ["margin", "profit", "wholesale", "markup", "cost_of", "cogs"];
const ALL_FRAGMENTS = [...SPEC_FRAGMENTS, ...SPEC_PNL_FRAGMENTS];

const MODEL_IDS = [
  "gpt-4o",
  "gpt-4o-mini-2024-07-18",
  "GPT-4",
  "gpt-3.5-turbo",
  "o1",
  "o1-mini",
  "o3",
  "o3-mini",
  "o4-mini",
  "chatgpt-4o-latest",
  "claude-3-5-sonnet-20241022",
  "claude-sonnet-4",
  "claude-opus-4-1",
  "gemini-1.5-pro",
  "gemini-2.0-flash",
  "llama-3.1-70b",
  "llama3",
  "meta-llama/Llama-3-8b",
  "mistral-large-latest",
  "mixtral-8x7b",
  "text-embedding-3-small",
  "whisper-1",
  "davinci-002",
  "deepseek-chat",
  "qwen2.5-72b",
  "command-r-plus",
  "anthropic/claude-3-haiku",
  "openai/gpt-4o",
];
const MODEL_ID_SET = new Set(MODEL_IDS.map((s) => s.toLowerCase()));

const NOT_MODEL_IDS = [
  "",
  "   ",
  "The call went well",
  "Gemini is my star sign",
  "o",
  "go",
  "01",
  "O2",
  "Llama farm",
  "jane.doe@example.com",
  "gpt-4o@example.com",
  "2024-07-18",
  "Summer Sale - Video 3",
  "mistral",
  "Claude",
  "claude",
  "Claude-Henri",
  "gemini",
  "llama",
  "whisper",
  "command",
  "command-line",
  "chatgpt",
  "chatgpt.com",
  "use gpt-4o for this",
  "gpt-4o is great",
];

const lower = (s: string): string => s.toLowerCase();
const hasFragment = (key: string, fragments: readonly string[]): boolean =>
  fragments.some((f) => lower(key).includes(f));

type Pair = { input: unknown; expected: unknown };

/** Builds an object with every key as an own data property, so a "__proto__" key stays a field. */
function objectFrom(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return o;
}

const harmlessKey = fc
  .oneof(
    fc.constantFrom(
      "id",
      "name",
      "revenue",
      "spend",
      "clicks",
      "rows",
      "data",
      "token",
      "price",
      "provide",
      "mod_el",
      "co_st",
      "__proto__",
      "constructor",
      "toString",
    ),
    fc.string({ maxLength: 10 }),
  )
  .filter((k) => !hasFragment(k, ALL_FRAGMENTS));

/** Fragment wrapped in random text with random casing, e.g. `xX_ApI_KeYz`. */
const forbiddenKey = (fragments: readonly string[]) =>
  fc
    .tuple(
      fc.string({ maxLength: 4 }),
      fc.mixedCase(fc.constantFrom(...fragments)),
      fc.string({ maxLength: 4 }),
    )
    .map(([a, f, b]) => `${a}${f}${b}`);

const harmlessString = fc.oneof(
  fc.constantFrom(...NOT_MODEL_IDS),
  // Identifiers never contain inner whitespace, so any two-word text is prose.
  fc
    .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ minLength: 1, maxLength: 8 }))
    .map(([a, b]) => `${a} ${b}`),
  fc.emailAddress(),
  fc.uuid(),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

const harmlessLeaf: fc.Arbitrary<Pair> = fc
  .oneof(
    harmlessString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.date({ noInvalidDate: true }),
  )
  .map((v) => ({ input: v, expected: v }));

const modelLeaf: fc.Arbitrary<Pair> = fc
  .tuple(
    fc.constantFrom("", " ", "\t", "\n "),
    fc.mixedCase(fc.constantFrom(...MODEL_IDS)),
    fc.constantFrom("", " ", "\n"),
  )
  .map(([a, id, b]) => ({ input: `${a}${id}${b}`, expected: SERVICE_NAME }));

/** Random JSON-like trees with the output redact must produce, built alongside the input. */
function treeOf(plantFragments: readonly string[]): fc.Arbitrary<Pair> {
  return fc.letrec<{ node: Pair; leaf: Pair; arr: Pair; obj: Pair }>((tie) => ({
    node: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("arr"), tie("obj")),
    leaf: fc.oneof(harmlessLeaf, modelLeaf),
    arr: fc.array(tie("node"), { maxLength: 5 }).map((items) => ({
      input: items.map((i) => i.input),
      expected: items.map((i) => i.expected),
    })),
    obj: fc
      .tuple(
        fc.uniqueArray(fc.tuple(harmlessKey, tie("node")), { selector: ([k]) => k, maxLength: 5 }),
        fc.array(fc.tuple(forbiddenKey(plantFragments), tie("node")), { maxLength: 3 }),
        fc.infiniteStream(fc.nat()),
      )
      .map(([kept, planted, positions]) => {
        // Interleave planted keys among the kept ones so their position varies.
        const entries: (readonly [string, unknown])[] = kept.map(([k, p]) => [k, p.input] as const);
        const it = positions[Symbol.iterator]();
        for (const [k, p] of planted) {
          const pos = (it.next().value ?? 0) % (entries.length + 1);
          entries.splice(pos, 0, [k, p.input]);
        }
        return {
          input: objectFrom(entries),
          expected: objectFrom(kept.map(([k, p]) => [k, p.expected] as const)),
        };
      }),
  })).node;
}

/** Independent walk of redact's output: no forbidden key and no model id left anywhere. */
function assertClean(v: unknown, fragments: readonly string[], path = "$"): void {
  if (typeof v === "string") {
    assert.ok(!MODEL_ID_SET.has(lower(v.trim())), `model id survived at ${path}: ${v}`);
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      assertClean(x, fragments, `${path}[${i}]`);
    });
    return;
  }
  if (typeof v === "object" && v !== null && !(v instanceof Date)) {
    assert.deepEqual(Object.getOwnPropertySymbols(v), [], `symbol key survived at ${path}`);
    for (const [k, x] of Object.entries(v)) {
      assert.ok(!hasFragment(k, fragments), `forbidden key survived at ${path}: ${k}`);
      assertClean(x, fragments, `${path}.${k}`);
    }
  }
}

/** Every array/object (Dates aside) reachable from v. */
function containers(v: unknown, acc = new Set<object>()): Set<object> {
  if (typeof v === "object" && v !== null && !(v instanceof Date) && !acc.has(v)) {
    acc.add(v);
    for (const x of Object.values(v)) containers(x, acc);
  }
  return acc;
}

describe("REDACTED_FRAGMENTS / PNL_EXTRA_FRAGMENTS", () => {
  test("match the SPEC lists exactly, lower-case", () => {
    assert.deepEqual([...REDACTED_FRAGMENTS].sort(), [...SPEC_FRAGMENTS].sort());
    assert.deepEqual([...PNL_EXTRA_FRAGMENTS].sort(), [...SPEC_PNL_FRAGMENTS].sort());
    for (const f of [...REDACTED_FRAGMENTS, ...PNL_EXTRA_FRAGMENTS]) assert.equal(f, f.toLowerCase());
  });
});

describe("looksLikeModelId", () => {
  for (const id of MODEL_IDS) {
    test(`matches ${JSON.stringify(id)}`, () => {
      assert.equal(looksLikeModelId(id), true);
      assert.equal(looksLikeModelId(`  ${id.toUpperCase()}\n`), true);
    });
  }
  for (const s of NOT_MODEL_IDS) {
    test(`does not match ${JSON.stringify(s)}`, () => {
      assert.equal(looksLikeModelId(s), false);
    });
  }

  test("never matches text with inner whitespace", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MODEL_IDS),
        fc.constantFrom(" ", "\t", "\n"),
        fc.string({ minLength: 1 }),
        (id, ws, word) => word.trim() === "" || !looksLikeModelId(`${id}${ws}${word.trim()}`),
      ),
      { numRuns: 2000 },
    );
  });

  test("stays fast on long input", () => {
    const long = `gpt-4${"-a".repeat(50_000)}`;
    const t0 = performance.now();
    assert.equal(looksLikeModelId(long), false);
    assert.equal(looksLikeModelId("a".repeat(100_000)), false);
    assert.ok(performance.now() - t0 < 100);
  });
});

describe("redact: properties", () => {
  test("removes planted keys and model ids at every depth, keeps everything else unchanged", () => {
    fc.assert(
      fc.property(treeOf(SPEC_FRAGMENTS), ({ input, expected }) => {
        const snapshot = structuredClone(input);
        const out = redact(input);
        assert.deepStrictEqual(out, expected);
        assertClean(out, SPEC_FRAGMENTS);
        assert.deepStrictEqual(input, snapshot, "input mutated");
        const inputContainers = containers(input);
        const shared = [...containers(out)].filter((o) => inputContainers.has(o));
        assert.equal(shared.length, 0, "output shares objects with input");
      }),
      { numRuns: 3000 },
    );
  });

  test("with the pnl fragments, those keys go too", () => {
    fc.assert(
      fc.property(treeOf(ALL_FRAGMENTS), ({ input, expected }) => {
        const out = redact(input, PNL_EXTRA_FRAGMENTS);
        assert.deepStrictEqual(out, expected);
        assertClean(out, ALL_FRAGMENTS);
      }),
      { numRuns: 2000 },
    );
  });

  test("a forbidden key buried under a long random path of arrays and objects is removed", () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("array" as const), index: fc.nat({ max: 3 }) }),
      fc.record({ kind: fc.constant("object" as const), key: harmlessKey }),
    );
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 300 }),
        forbiddenKey(SPEC_FRAGMENTS),
        modelLeaf,
        (steps, badKey, model) => {
          let input: unknown = objectFrom([
            [badKey, "leak"],
            ["ok", model.input],
          ]);
          let expected: unknown = { ok: SERVICE_NAME };
          for (const s of [...steps].reverse()) {
            if (s.kind === "array") {
              const pad = Array.from({ length: s.index }, (_, i) => i);
              input = [...pad, input];
              expected = [...pad, expected];
            } else {
              input = objectFrom([[s.key, input]]);
              expected = objectFrom([[s.key, expected]]);
            }
          }
          const out = redact(input);
          assert.deepStrictEqual(out, expected);
          assertClean(out, SPEC_FRAGMENTS);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("a bare string is masked exactly when it looks like a model id", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom(...MODEL_IDS, ...NOT_MODEL_IDS)), (s) => {
        assert.equal(redact(s), looksLikeModelId(s) ? SERVICE_NAME : s);
        assert.deepStrictEqual(redact([s]), [redact(s)]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("redact: examples", () => {
  test("nested arrays of arrays and objects inside arrays", () => {
    const input = {
      data: [
        [
          { id: 1, API_Key: "k", label: "gpt-4o" },
          [{ password_hash: "h", nested: [[{ model: "x", keep: "Summer Sale - Video 3" }]] }],
        ],
        "claude-3-5-sonnet-20241022",
        ["o1", "o", 3, null, true],
      ],
      meta: { SystemPrompt: "be nice", total: 2, webhookSecret: "s", "x-Bearer-y": "t" },
    };
    assert.deepStrictEqual(redact(input), {
      data: [
        [{ id: 1, label: "Ascribe" }, [{ nested: [[{ keep: "Summer Sale - Video 3" }]] }]],
        "Ascribe",
        ["Ascribe", "o", 3, null, true],
      ],
      meta: { total: 2 },
    });
  });

  test("every SPEC fragment removes a key containing it, in any casing", () => {
    for (const f of SPEC_FRAGMENTS) {
      const input = { [`pre_${f.toUpperCase()}_post`]: 1, [f]: 2, kept: 3 };
      assert.deepStrictEqual(redact(input), { kept: 3 }, f);
    }
  });

  test("pnl fragments are removed only when passed as extras", () => {
    const row = {
      revenue: 1000,
      gross_profit: 300,
      cogs_total: 500,
      Margin: 0.3,
      markup_pct: 2,
      day: "2024-07-18",
    };
    assert.deepStrictEqual(redact(row), {
      revenue: 1000,
      gross_profit: 300,
      cogs_total: 500,
      Margin: 0.3,
      day: "2024-07-18",
    });
    assert.deepStrictEqual(redact(row, PNL_EXTRA_FRAGMENTS), { revenue: 1000, day: "2024-07-18" });
    assert.deepStrictEqual(redact([{ rows: [row] }], PNL_EXTRA_FRAGMENTS), [
      { rows: [{ revenue: 1000, day: "2024-07-18" }] },
    ]);
  });

  test("cost_of_goods goes even without extras: it contains the SPEC fragment `cost`", () => {
    assert.deepStrictEqual(redact({ cost_of_goods: 5, revenue: 9 }), { revenue: 9 });
    assert.deepStrictEqual(redact({ cost_of_goods: 5, revenue: 9 }, PNL_EXTRA_FRAGMENTS), { revenue: 9 });
  });

  test("field names decided in one call are decided alike in the next, past the remembered 4096", () => {
    // The decisions are kept across calls per fragment list: one list's never leak into another's,
    // and a memory that starts afresh (more than 4096 distinct names) still drops what it must.
    assert.deepStrictEqual(redact({ gross_margin_x: 1, margin_y: 2, a: 3 }), { margin_y: 2, a: 3 });
    assert.deepStrictEqual(redact({ gross_margin_x: 1, margin_y: 2, a: 3 }, PNL_EXTRA_FRAGMENTS), { a: 3 });
    assert.deepStrictEqual(redact({ margin_y: 2, a: 3 }), { margin_y: 2, a: 3 });
    const wide: Record<string, number> = {};
    for (let i = 0; i < 5000; i++) wide[`field_${i}`] = i;
    wide.api_key_5001 = 1;
    wide.margin_5002 = 2;
    const once = redact(wide, PNL_EXTRA_FRAGMENTS) as Record<string, number>;
    const twice = redact(wide, PNL_EXTRA_FRAGMENTS) as Record<string, number>;
    for (const out of [once, twice]) {
      assert.equal(Object.keys(out).length, 5000);
      assert.equal(out.field_4999, 4999);
      assert.equal("api_key_5001" in out, false);
      assert.equal("margin_5002" in out, false);
    }
    assert.deepStrictEqual(redact({ margin_5002: 2, api_key_5001: 1 }), { margin_5002: 2 });
  });

  test("extra fragments are matched case-insensitively", () => {
    assert.deepStrictEqual(redact({ CampaignSecretSauce: 1, internalNote: 2, a: 3 }, ["INTERNAL"]), { a: 3 });
  });

  test("model ids are replaced, look-alike prose is not", () => {
    const input = {
      engine: "openai/gpt-4o",
      values: ["meta-llama/Llama-3-8b", "mistral", "Llama farm", " o3-mini ", "Gemini is my star sign"],
    };
    assert.deepStrictEqual(redact(input), {
      engine: "Ascribe",
      values: ["Ascribe", "mistral", "Llama farm", "Ascribe", "Gemini is my star sign"],
    });
  });

  test("keeps primitives and Date instances; drops symbol keys; does not mutate", () => {
    const when = new Date("2024-07-18T00:00:00Z");
    const marker = Symbol("m");
    const input = { when, n: -0, big: 10n, f: Number.NaN, s: "x", [marker]: "owner", api_key: "k" };
    const out = redact(input) as Record<string | symbol, unknown>;
    assert.equal(out.when, when);
    assert.ok(Object.is(out.n, -0));
    assert.equal(out.big, 10n);
    assert.ok(Number.isNaN(out.f));
    assert.equal(out[marker], undefined);
    assert.deepEqual(Object.keys(out).sort(), ["big", "f", "n", "s", "when"]);
    assert.equal(input.api_key, "k");
    assert.equal(input[marker], "owner");
  });

  test("a __proto__ field is copied as a field, never as the prototype", () => {
    const input = JSON.parse('{"__proto__": {"secret": 1, "x": "gpt-4"}, "y": 2}') as unknown;
    const out = redact(input) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { x: "Ascribe" });
  });

  test("handles nesting 1000 deep", () => {
    let input: unknown = { token_count: 1, v: "gpt-4" };
    let expected: unknown = { v: "Ascribe" };
    for (let i = 0; i < 1000; i++) {
      input = i % 2 === 0 ? [input] : { child: input, cost: i };
      expected = i % 2 === 0 ? [expected] : { child: expected };
    }
    assert.deepStrictEqual(redact(input), expected);
  });

  test("repeated references are copied, cycles are refused", () => {
    const shared = { a: 1, secret: 2 };
    assert.deepStrictEqual(redact([shared, shared]), [{ a: 1 }, { a: 1 }]);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.throws(() => redact(cyclic), TypeError);
  });

  test("large responses are linear: 50k rows", () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ({
      id: i,
      name: `ad ${i}`,
      cost: 1,
      model: "gpt-4o",
    }));
    const t0 = performance.now();
    const out = redact({ data: rows }) as { data: unknown[] };
    assert.equal(out.data.length, 50_000);
    assert.deepStrictEqual(out.data[7], { id: 7, name: "ad 7" });
    assert.ok(performance.now() - t0 < 2000);
  });
});

describe("redactRows: the same result as redact on a list of rows", () => {
  test("examples: flat rows are copied with dropped fields and masked ids, in arrays too; others walk", () => {
    const input = [
      { id: "1", contact_name: "gpt-4o", products: ["Coaching", "claude-3-opus"], cost: 5, n: 2 },
      { id: "2", secret: "x", nested: { model: "o1", note: "gemini-1.5-pro" }, when: new Date(0) },
      null,
      "mistral-large-latest",
      ["a", { api_key: "k" }],
    ];
    const expected = [
      { id: "1", contact_name: SERVICE_NAME, products: ["Coaching", SERVICE_NAME], n: 2 },
      { id: "2", nested: { note: SERVICE_NAME }, when: new Date(0) },
      null,
      SERVICE_NAME,
      ["a", {}],
    ];
    assert.deepStrictEqual(redactRows(input), expected);
    assert.deepStrictEqual(redactRows([{ margin: 1, profit: 2, kept: 3 }], PNL_EXTRA_FRAGMENTS), [
      { kept: 3 },
    ]);
  });

  test("a __proto__ field of a flat row is copied as a field", () => {
    const row = JSON.parse('{"__proto__": "gpt-4", "a": 1}') as object;
    const [out] = redactRows([row]) as object[];
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(JSON.stringify(out), `{"__proto__":"${SERVICE_NAME}","a":1}`);
  });

  test("properties: the same JSON and structure as redact for lists of mixed rows", () => {
    const model = fc.constantFrom("gpt-4o", "claude-3-5-sonnet", "o3-mini", "llama3", "Claude", "mistral");
    const scalar = fc.oneof(
      fc.string({ maxLength: 8 }),
      model,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const key = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom("cost", "Model", "api_key", "margin", "__proto__"),
    );
    const field = fc.oneof(
      scalar,
      fc.array(scalar, { maxLength: 3 }),
      fc.dictionary(key, scalar, { maxKeys: 3 }),
    );
    const row = fc.dictionary(key, field, { maxKeys: 6 });
    fc.assert(
      fc.property(fc.array(fc.oneof(row, scalar), { maxLength: 6 }), fc.boolean(), (rows, pnl) => {
        const extras = pnl ? PNL_EXTRA_FRAGMENTS : [];
        const fast = redactRows(rows, extras);
        assert.deepStrictEqual(fast, redact(rows, extras));
        assert.equal(JSON.stringify(fast), JSON.stringify(redact(rows, extras)));
      }),
      { numRuns: 2000 },
    );
  });
});
