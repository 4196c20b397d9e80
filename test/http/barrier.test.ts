import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";
import fc from "fast-check";
import { assertRowsOwned, assertSingleTenant, markOwner, OWNER, ownedRows } from "../../src/http/barrier.ts";
import { ApiError } from "../../src/http/errors.ts";
import { redact } from "../../src/http/redact.ts";

const ME = "acc_11111111-1111-4111-8111-111111111111";
const OTHER = "acc_22222222-2222-4222-8222-222222222222";

const ownerOf = (o: object): unknown => (o as { [OWNER]?: unknown })[OWNER];

/** Runs fn, expecting the barrier to refuse; returns the error for content checks. */
function barrierError(fn: () => void): ApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${String(e)}`);
    assert.equal(e.code, "tenant_barrier");
    assert.equal(e.status, 500);
    assert.deepStrictEqual(e.body(), { error: "tenant_barrier" });
    return e;
  }
  assert.fail("barrier did not throw");
}

/** Everything a caller or a log line could see of the error. */
function errorText(e: ApiError): string {
  return [
    e.message,
    e.stack ?? "",
    JSON.stringify(e.body()),
    JSON.stringify(e.extra),
    inspect(e, { depth: 10 }),
  ].join("\n");
}

describe("markOwner", () => {
  test("tag is invisible to JSON, keys and spreads", () => {
    const row = markOwner({ id: 1, name: "n" }, ME);
    assert.equal(ownerOf(row), ME);
    assert.deepEqual(Object.keys(row), ["id", "name"]);
    assert.equal(JSON.stringify(row), '{"id":1,"name":"n"}');
    assert.equal(Object.getOwnPropertySymbols({ ...row }).length, 0);
  });

  test("a row cannot be relabelled to another tenant", () => {
    const row = markOwner({ id: 1 }, ME);
    assert.equal(markOwner(row, ME), row);
    assert.throws(() => markOwner(row, OTHER), TypeError);
    assert.equal(ownerOf(row), ME);
  });
});

describe("ownedRows", () => {
  test("strips account_id, tags each row with it, leaves the input alone", () => {
    const input = [
      { account_id: ME, id: 1, name: "a" },
      { account_id: OTHER, id: 2, name: "b" },
    ];
    const rows = ownedRows(input);
    assert.deepStrictEqual(rows, [
      { id: 1, name: "a" },
      { id: 2, name: "b" },
    ]);
    assert.equal(rows[0] && ownerOf(rows[0]), ME);
    assert.equal(rows[1] && ownerOf(rows[1]), OTHER);
    assert.equal(input[0]?.account_id, ME);
  });

  test("JSON of the result never contains account_id, the account id or the tag", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            account_id: fc.uuid().map((u) => `acc_${u}`),
            id: fc.nat(),
            name: fc.string(),
            spend: fc.double({ noNaN: true, noDefaultInfinity: true }),
          }),
          { maxLength: 20 },
        ),
        (input) => {
          const json = JSON.stringify({ data: ownedRows(input) });
          assert.ok(!json.includes("account_id"));
          assert.ok(!json.includes("ascribe.owner"));
          for (const r of input) assert.ok(!json.includes(r.account_id));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("assertSingleTenant: examples", () => {
  test("a foreign row nested deep inside arrays blocks the response", () => {
    const foreign = markOwner(
      { id: "ROW-ID-FOREIGN", email: "victim@other.example", note: "TOP-SECRET-FOREIGN" },
      OTHER,
    );
    const data = {
      data: [[markOwner({ id: 1 }, ME)], [[{ total: 3 }, [[[foreign]]]]]],
      meta: { count: 2 },
    };
    const err = barrierError(() => assertSingleTenant(data, ME));
    const text = errorText(err);
    for (const leaked of [OTHER, "victim@other.example", "TOP-SECRET-FOREIGN", "ROW-ID-FOREIGN"]) {
      assert.ok(!text.includes(leaked), `error exposes ${leaked}`);
    }
  });

  test("same-tenant rows, unmarked aggregates and primitives pass", () => {
    assert.doesNotThrow(() =>
      assertSingleTenant({ data: ownedRows([{ account_id: ME, id: 1 }]), totals: { spend: 3 } }, ME),
    );
    assert.doesNotThrow(() => assertSingleTenant([{ a: [{ b: 1 }] }, new Date(0)], ME));
    for (const v of [null, undefined, 0, "", "x", true, []])
      assert.doesNotThrow(() => assertSingleTenant(v, ME));
  });

  test("a marked array or a row tagged without a usable account id fails closed", () => {
    barrierError(() => assertSingleTenant({ data: markOwner([1, 2], OTHER) }, ME));
    const rows = ownedRows([{ id: 1 } as unknown as { account_id: string }]);
    barrierError(() => assertSingleTenant(rows, ME));
    barrierError(() => assertSingleTenant([markOwner({}, null as unknown as string)], ME));
  });

  test("a tag inherited through the prototype chain is still checked", () => {
    const child: unknown = Object.create(markOwner({}, OTHER));
    barrierError(() => assertSingleTenant({ data: [child] }, ME));
  });

  test("deep and cyclic structures neither blow the stack nor loop", () => {
    let deep: unknown = markOwner({ id: 1 }, OTHER);
    for (let i = 0; i < 50_000; i++) deep = i % 2 === 0 ? [deep] : { child: deep };
    barrierError(() => assertSingleTenant(deep, ME));

    const cyclic: Record<string, unknown> = markOwner({ id: 1 }, ME);
    cyclic.self = cyclic;
    cyclic.list = [cyclic, { again: cyclic }];
    assert.doesNotThrow(() => assertSingleTenant(cyclic, ME));
  });

  test("redacting a checked response drops the tag", () => {
    const out = redact({ data: ownedRows([{ account_id: ME, id: 1 }]) }) as { data: object[] };
    assert.ok(out.data[0] !== undefined && !(OWNER in out.data[0]));
  });
});

describe("assertSingleTenant: properties", () => {
  type Tree = unknown;
  const leaf = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  /** Response-shaped trees where every row is either ours or untagged. */
  const tree = fc.letrec<{ node: Tree; arr: Tree; obj: Tree }>((tie) => ({
    node: fc.oneof({ depthSize: "small" }, leaf, tie("arr"), tie("obj")),
    arr: fc.array(tie("node"), { maxLength: 5 }),
    obj: fc
      .tuple(fc.dictionary(fc.string({ maxLength: 6 }), tie("node"), { maxKeys: 5 }), fc.boolean())
      .map(([o, mine]) => (mine ? markOwner({ ...o }, ME) : { ...o })),
  })).node;

  /** Arrays and objects of a tree, in a stable order, for picking a place to plant. */
  function containersOf(v: unknown, acc: object[] = []): object[] {
    if (typeof v === "object" && v !== null) {
      acc.push(v);
      for (const x of Object.values(v)) containersOf(x, acc);
    }
    return acc;
  }

  test("passes without a foreign row; with one planted anywhere it throws and reveals nothing of it", () => {
    fc.assert(
      fc.property(
        tree,
        fc.boolean(),
        fc.nat(),
        fc.uuid(),
        fc.uuid(),
        fc.boolean(),
        (t, plant, where, foreignAccount, secret, wrapInArray) => {
          const root = { data: t };
          if (!plant) {
            assertSingleTenant(root, ME);
            return;
          }
          const foreignId = `acc_${foreignAccount}`;
          const token = `FOREIGN-${secret}`;
          const [row] = ownedRows([{ account_id: foreignId, id: token, name: `name ${token}` }]);
          const spot = containersOf(root);
          const target = spot[where % spot.length] ?? root;
          const planted = wrapInArray ? [[row]] : row;
          if (Array.isArray(target)) target.splice(where % (target.length + 1), 0, planted);
          else (target as Record<string, unknown>)[`k${where}`] = planted;

          const err = barrierError(() => assertSingleTenant(root, ME));
          const text = errorText(err);
          assert.ok(!text.includes(token) && !text.includes(foreignId) && !text.includes(secret));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("assertRowsOwned: the same verdict as assertSingleTenant on a list of rows", () => {
  test("examples: a foreign row, a foreign tag on a row's array, on the list itself; ours and untagged pass", () => {
    const mine = ownedRows([{ account_id: ME, id: "a", products: ["x"] }]);
    const theirs = ownedRows([{ account_id: OTHER, id: "b", products: ["y"] }]);
    assertRowsOwned([...mine, { id: "untagged", n: 1 }, null, 3, "s"], ME);
    barrierError(() => assertRowsOwned([...mine, ...theirs], ME));
    barrierError(() => assertRowsOwned([{ id: "c", products: markOwner(["z"], OTHER) }], ME));
    barrierError(() => assertRowsOwned([{ id: "d", nested: { deep: [theirs[0]] } }], ME));
    barrierError(() => assertRowsOwned(markOwner([...mine], OTHER), ME));
  });

  test("properties: lists of flat, nested, tagged and foreign rows", () => {
    const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
    const owner = fc.constantFrom<string | null>(null, ME, OTHER);
    const field = fc.oneof(
      scalar,
      fc.array(scalar, { maxLength: 3 }),
      fc.tuple(fc.array(scalar, { maxLength: 2 }), owner).map(([a, o]) => (o ? markOwner(a, o) : a)),
      fc
        .tuple(fc.dictionary(fc.string({ maxLength: 4 }), scalar, { maxKeys: 3 }), owner)
        .map(([d, o]) => (o ? markOwner({ ...d }, o) : { ...d })),
    );
    const row = fc
      .tuple(fc.dictionary(fc.string({ maxLength: 6 }), field, { maxKeys: 6 }), owner)
      .map(([d, o]) => (o ? markOwner({ ...d }, o) : { ...d }));
    fc.assert(
      fc.property(fc.array(fc.oneof(row, scalar), { maxLength: 6 }), (rows) => {
        let expected = true;
        try {
          assertSingleTenant(rows, ME);
        } catch {
          expected = false;
        }
        if (expected) assertRowsOwned(rows, ME);
        else barrierError(() => assertRowsOwned(rows, ME));
      }),
      { numRuns: 2000 },
    );
  });
});
