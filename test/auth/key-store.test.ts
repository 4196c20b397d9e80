import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { hashApiKey } from "../../src/auth/api-key.ts";
import { createCachedKeyStore } from "../../src/auth/key-store.ts";
import type { Database } from "../../src/db/client.ts";
import { bearer, createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

/** Counts the database lookups a store makes. */
function countingDb(inner: Database) {
  const counted = { lookups: 0 };
  const wrapped: Database = {
    ...inner,
    keyLookup: (hash, fn) => {
      counted.lookups += 1;
      return inner.keyLookup(hash, fn);
    },
  };
  return Object.assign(counted, { db: wrapped });
}

/**
 * Waits until the change feed listens and the announcements of the writes made so far have come
 * (on PostgreSQL they arrive a moment after each commit), so a count of lookups is exact.
 */
async function quietFeed(): Promise<void> {
  const feed = db.keyChanges();
  let last = -1;
  while (!feed.trusted() || feed.generation() !== last) {
    last = feed.generation();
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

describe("key store", () => {
  test("cached: a found key is read once until an administration transaction", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    await quietFeed();
    const counting = countingDb(db);
    const store = createCachedKeyStore(counting.db, counting.db.keyChanges());
    const hash = hashApiKey(key);
    const first = await store.find(hash);
    assert.equal(first?.account_id, account.accountId);
    await store.find(hash);
    await store.find(hash);
    assert.equal(counting.lookups, 1);
    await db.admin(account.accountId, async () => {});
    await store.find(hash);
    assert.equal(counting.lookups, 2, "looked up again after an administration");
    assert.equal(await store.find(hashApiKey(`svc_sk_live_${"Z".repeat(32)}`)), null);
    assert.equal(await store.find(hashApiKey(`svc_sk_live_${"Z".repeat(32)}`)), null);
    assert.equal(counting.lookups, 4, "unknown keys are not kept");
  });

  test("cached: nothing is served from memory while the change feed is not trusted", async () => {
    const account = await seedAccount(db);
    const hash = hashApiKey(await account.key(["read:icp"]));
    const counting = countingDb(db);
    const feed = { generation: 0, trusted: false };
    const store = createCachedKeyStore(counting.db, {
      generation: () => feed.generation,
      trusted: () => feed.trusted,
      close: async () => {},
    });
    await store.find(hash);
    await store.find(hash);
    assert.equal(counting.lookups, 2, "an untrusted feed: every find asks the database");
    feed.trusted = true;
    await store.find(hash);
    await store.find(hash);
    assert.equal(counting.lookups, 3, "trusted again: kept");
    feed.generation += 1;
    await store.find(hash);
    assert.equal(counting.lookups, 4, "a change announced: asked again");
  });

  // The app uses the store main.ts picks for the back-end (cached on the embedded database).
  test("a key revoked after it was used answers 401 on the very next request", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const app = await createTestApp(db);
    try {
      const ask = () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      assert.equal((await ask()).statusCode, 200);
      assert.equal((await ask()).statusCode, 200);
      await account.revoke(key);
      assert.equal((await ask()).statusCode, 401);
    } finally {
      await app.close();
      await app.audit.close();
    }
  });

  test("a plan moved to free after the key was used answers 403 on the very next request", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const app = await createTestApp(db);
    try {
      const ask = () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      assert.equal((await ask()).statusCode, 200);
      await account.setPlan("free");
      assert.deepEqual((await ask()).json(), { error: "plan_free_no_api" });
      await account.setPlan("business");
      assert.equal((await ask()).statusCode, 200);
    } finally {
      await app.close();
      await app.audit.close();
    }
  });

  test("a key that expires while in use answers 401 from its expiry on", async () => {
    const account = await seedAccount(db);
    const createdAt = new Date("2026-03-01T12:00:00Z");
    const key = await account.key(["read:icp"], { expires: "90d", createdAt });
    let now = new Date("2026-05-30T11:59:59Z"); // one second before 90 days have passed
    const app = await createTestApp(db, { clock: () => now });
    try {
      const ask = () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      assert.equal((await ask()).statusCode, 200);
      now = new Date("2026-05-30T12:00:00Z");
      assert.equal((await ask()).statusCode, 401);
    } finally {
      await app.close();
      await app.audit.close();
    }
  });

  test("malformed keys are refused before any database lookup", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const finds: string[] = [];
    const app = await createTestApp(db, {
      keys: {
        find: async (hash) => {
          finds.push(hash);
          return null;
        },
      },
    });
    try {
      for (const bad of ["junk", `${key}x`, key.slice(0, -1), key.replace("svc_sk_live_", "svc_sk_test_")]) {
        const res = await app.inject({
          url: "/api/v1/icp/criteria",
          headers: bearer(bad),
          remoteAddress: "10.7.0.1",
        });
        assert.equal(res.statusCode, 401);
      }
      assert.deepEqual(finds, []);
      await app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key), remoteAddress: "10.7.0.2" });
      assert.deepEqual(finds, [hashApiKey(key)], "a well-formed key is looked up by its hash");
    } finally {
      await app.close();
      await app.audit.close();
    }
  });
});
