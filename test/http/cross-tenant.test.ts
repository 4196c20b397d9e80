import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database } from "../../src/db/client.ts";
import { routes } from "../../src/routes/index.ts";
import { API_PREFIX } from "../../src/routes/route-def.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  sampleBody,
  seedAccount,
  seedAdRule,
} from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

test("two accounts with the same name and owner email: nothing of one ever reaches the other", async () => {
  const shared = { name: "Acme", owner: "same.person@acme.test" };
  const a = await seedAccount(db, shared);
  const b = await seedAccount(db, shared);
  const keyA = await a.key(["*"]);
  const keyB = await b.key(["*"]);
  const app = await createTestApp(db);
  try {
    const put = (key: string, icp: Record<string, unknown>) =>
      app.inject({
        method: "PUT",
        url: `${API_PREFIX}/icp`,
        headers: { ...bearer(key), "content-type": "application/json" },
        payload: JSON.stringify({ icp }),
      });
    assert.equal((await put(keyA, { tag: "MARK-A-5521", shared: "same" })).statusCode, 200);
    assert.equal((await put(keyB, { tag: "MARK-B-9034", shared: "same" })).statusCode, 200);

    // Every write route of A, then every read route of both: B's marker never shows in A's answers.
    for (const route of routes) {
      for (const method of route.methods) {
        if (method === "GET") continue;
        const res = await app.inject({
          method,
          url: API_PREFIX + route.path,
          headers: { ...bearer(keyA), "content-type": "application/json" },
          payload: JSON.stringify(
            await sampleBody(route.path, { newRule: () => seedAdRule(db, a.accountId) }),
          ),
        });
        assert.equal(res.statusCode, 200, `${method} ${route.path}`);
      }
    }
    for (const route of routes.filter((r) => r.methods.includes("GET"))) {
      const fromA = await app.inject({ url: API_PREFIX + route.path, headers: bearer(keyA) });
      const fromB = await app.inject({ url: API_PREFIX + route.path, headers: bearer(keyB) });
      for (const [body, foreign] of [
        [fromA.body, ["MARK-B-9034", b.accountId]],
        [fromB.body, ["MARK-A-5521", a.accountId, "coaching"]],
      ] as const) {
        for (const needle of foreign) assert.ok(!body.includes(needle), `${route.path}: ${needle} leaked`);
      }
    }
    // B's criteria are untouched by A's writes.
    const criteriaB = await app.inject({ url: `${API_PREFIX}/icp/criteria`, headers: bearer(keyB) });
    assert.deepEqual(criteriaB.json(), { data: { tag: "MARK-B-9034", shared: "same" } });
  } finally {
    await app.close();
    await app.audit.close();
  }
});
