import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createGroupCommit } from "../../src/ingest/group-commit.ts";

/** An error as node-postgres gives it: the SQLSTATE in `code`. */
const sqlError = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });

const tick = () => new Promise((resolve) => setImmediate(resolve));

interface Item {
  name: string;
  keys: string[];
}

describe("group commit: keys and lost races", () => {
  test("two batches in flight never share a key; a key's items are written in arrival order", async () => {
    const batches: string[][] = [];
    const inFlight = new Set<string[]>();
    const overlaps: string[] = [];
    const releases: (() => void)[] = [];
    const items = new Map<string, Item>();
    const group = createGroupCommit<Item, string>(
      async (_account, batch) => {
        const names = batch.map((i) => i.name);
        for (const other of inFlight) {
          const shared = batch
            .flatMap((i) => i.keys)
            .filter((k) => other.some((n) => items.get(n)?.keys.includes(k)));
          if (shared.length > 0) overlaps.push(`${names} with ${other}: ${shared}`);
        }
        batches.push(names);
        inFlight.add(names);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight.delete(names);
        return names;
      },
      { concurrency: 2, keysOf: (i) => i.keys },
    );
    const submit = (name: string, keys: string[]) => {
      items.set(name, { name, keys });
      return group.submit("a", { name, keys });
    };
    const first = [submit("a1", ["visitor:1"]), submit("b1", ["visitor:2"])];
    await tick();
    // The account is busy with [a1, b1]; the second batch takes what shares no key with it.
    const second = [
      submit("a2", ["visitor:1"]),
      submit("c1", ["visitor:3", "contact:x"]),
      submit("d1", ["visitor:4", "contact:x"]),
      submit("e1", ["visitor:5"]),
    ];
    await tick();
    assert.deepEqual(batches, [
      ["a1", "b1"],
      ["c1", "d1", "e1"],
    ]);
    releases.shift()?.();
    await Promise.all(first);
    await tick();
    assert.deepEqual(batches[2], ["a2"]);
    while (releases.length > 0) {
      releases.shift()?.();
      await tick();
    }
    assert.deepEqual(await Promise.all(second), ["a2", "c1", "d1", "e1"]);
    assert.deepEqual(overlaps, []);
  });

  test("an item held back holds its keys for the items after it, even when they could go", async () => {
    const batches: string[][] = [];
    const releases: (() => void)[] = [];
    const group = createGroupCommit<Item, void>(
      async (_account, batch) => {
        batches.push(batch.map((i) => i.name));
        await new Promise<void>((resolve) => releases.push(resolve));
        return batch.map(() => undefined);
      },
      { concurrency: 2, keysOf: (i) => i.keys },
    );
    const all = [group.submit("a", { name: "p1", keys: ["visitor:1"] })];
    await tick();
    // p2 waits for p1 (visitor 1); p3 shares only visitor 2 with p2, and must not pass it.
    all.push(group.submit("a", { name: "p2", keys: ["visitor:1", "contact:y"] }));
    all.push(group.submit("a", { name: "p3", keys: ["visitor:2", "contact:y"] }));
    all.push(group.submit("a", { name: "p4", keys: ["visitor:9"] }));
    await tick();
    assert.deepEqual(batches, [["p1"], ["p4"]]);
    while (releases.length > 0 || batches.flat().length < 4) {
      releases.shift()?.();
      await tick();
    }
    await Promise.all(all);
    assert.deepEqual(batches, [["p1"], ["p4"], ["p2", "p3"]]);
  });

  test("a batch that lost a race (deadlock, serialization failure) is written again whole", async () => {
    const calls: string[][] = [];
    const failures = ["40P01", "40001"];
    const group = createGroupCommit<string, string>(async (_account, batch) => {
      calls.push([...batch]);
      const code = failures.shift();
      if (code) throw sqlError(code);
      return batch.map((i) => `stored ${i}`);
    });
    const answers = await Promise.all(["x", "y", "z"].map((i) => group.submit("a", i)));
    assert.deepEqual(answers, ["stored x", "stored y", "stored z"]);
    // Not split in halves as a refusal by the data would be.
    assert.deepEqual(calls, [
      ["x", "y", "z"],
      ["x", "y", "z"],
      ["x", "y", "z"],
    ]);
  });

  test("after three lost races the whole batch is refused, none of it split or acknowledged", async () => {
    let calls = 0;
    const group = createGroupCommit<string, string>(async () => {
      calls += 1;
      throw sqlError("40P01");
    });
    const answers = await Promise.allSettled(["x", "y"].map((i) => group.submit("a", i)));
    assert.deepEqual(
      answers.map((a) => a.status),
      ["rejected", "rejected"],
    );
    assert.equal(calls, 3);
  });
});
