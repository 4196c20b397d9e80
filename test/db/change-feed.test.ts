import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { updateAccountSettings } from "../../src/admin/accounts.ts";
import { hashApiKey } from "../../src/auth/api-key.ts";
import { awaitListeners, type ChangeFeed } from "../../src/db/change-feed.ts";
import { openPostgres } from "../../src/db/client.ts";
import { backend, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * What a key cache relies on: migration 0025's triggers announce every change to what a cached key
 * record holds, whoever makes it, and nothing else; the feed stops being trusted while it cannot
 * hear them.
 */

let db: Awaited<ReturnType<typeof openTestDatabase>>;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe(`key change feed (${backend})`, () => {
  test("an administration of this process moves the generation at once", async () => {
    const feed = db.keyChanges();
    await until(() => feed.trusted());
    const before = feed.generation();
    const account = await seedAccount(db);
    assert.ok(feed.generation() > before);
    const settled = feed.generation();
    await account.setPlan("business");
    assert.ok(feed.generation() > settled);
  });

  test("another connection's writes: a revocation, a plan, a deletion are announced; last_used_at is not", {
    skip: backend !== "postgres" && "only this process writes the embedded database",
  }, async () => {
    const feed: ChangeFeed = db.keyChanges();
    await until(() => feed.trusted());
    const account = await seedAccount(db);
    const hash = hashApiKey(await account.key(["read:icp"]));
    const other = new pg.Client({ connectionString: db.url ?? "" });
    await other.connect();
    try {
      const write = async (statement: string, params: unknown[]) => {
        const at = feed.generation();
        await other.query(statement, params);
        return at;
      };
      // Quiet writes first: nothing may be announced after them.
      let at = await write("update api_keys set last_used_at = now() where key_hash = $1", [hash]);
      await write("update accounts set name = 'Renamed' where id = $1", [account.accountId]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(feed.generation(), at, "last_used_at and the name are not what a key record holds");

      for (const [statement, params] of [
        ["update api_keys set revoked_at = now() where key_hash = $1", [hash]],
        ["update accounts set plan = 'free' where id = $1", [account.accountId]],
        ["update accounts set timezone = 'Europe/Paris' where id = $1", [account.accountId]],
        ["delete from api_keys where key_hash = $1", [hash]],
      ] as const) {
        at = await write(statement, [...params]);
        await until(() => feed.generation() > at);
      }
    } finally {
      await other.end();
    }
  });

  test("a lost listening connection: untrusted until it listens again, then a new generation", {
    skip: backend !== "postgres" && "the embedded database has no connection to lose",
  }, async () => {
    const feed = db.keyChanges();
    await until(() => feed.trusted());
    const at = feed.generation();
    const killer = new pg.Client({ connectionString: db.url ?? "" });
    await killer.connect();
    try {
      const killed = await killer.query(
        "select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = 'ascribe key changes' and datname = current_database()",
      );
      assert.equal(killed.rowCount, 1);
    } finally {
      await killer.end();
    }
    await until(() => !feed.trusted());
    await until(() => feed.trusted());
    assert.ok(feed.generation() > at);
  });
});

/*
 * A notification reaches a listener some time after its commit: `keyChangesSeen` (awaitListeners)
 * holds the revoking command until every listening connection has echoed a marker sent after the
 * change. Stand-in listeners answer late, never, or go away.
 */
describe("waiting for every listener (PostgreSQL)", {
  skip: backend !== "postgres" && "one process holds the embedded database",
}, () => {
  /** A connection that listens as a serving instance does and answers the marker as told. */
  async function standIn(answer: "after 400 ms" | "never" | "disconnect after 200 ms") {
    const client = new pg.Client({ connectionString: db.url ?? "", application_name: "ascribe key changes" });
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => Promise<unknown>) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        // Gone by then (the test ended it): nothing to answer.
        fn().catch(() => undefined);
      }, ms);
      timers.add(timer);
    };
    client.on("error", () => {});
    await client.connect();
    await client.query("LISTEN ascribe_key_change");
    client.on("notification", (message) => {
      if (!message.payload?.startsWith("sync:")) return;
      if (answer === "after 400 ms") {
        later(400, () => client.query("select pg_notify('ascribe_key_change_ack', $1)", [message.payload]));
      } else if (answer === "disconnect after 200 ms") later(200, () => client.end());
    });
    return {
      end: async () => {
        for (const timer of timers) clearTimeout(timer);
        await client.end();
      },
    };
  }

  async function timed(timeoutMs: number) {
    const started = Date.now();
    const result = await awaitListeners(db.url ?? "", { connectTimeoutMs: 5_000, timeoutMs });
    return { ...result, ms: Date.now() - started };
  }

  test("a revocation, a plan change, a timezone change each return only after a late listener answered", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const late = await standIn("after 400 ms");
    try {
      const changes: [string, () => Promise<unknown>][] = [
        ["revocation", () => account.revoke(key)],
        ["plan", () => account.setPlan("business")],
        [
          "timezone",
          () =>
            updateAccountSettings(db, { account: account.accountId, name: "Moved", timezone: "Asia/Tokyo" }),
        ],
      ];
      for (const [what, change] of changes) {
        const started = Date.now();
        await change();
        const ms = Date.now() - started;
        assert.ok(ms >= 400, `the ${what} returned after ${ms} ms, before the listener answered`);
      }
    } finally {
      await late.end();
    }
  });

  test("waits for a listener that answers late", async () => {
    const late = await standIn("after 400 ms");
    try {
      const result = await timed(5_000);
      assert.ok(result.ms >= 400, `returned after ${result.ms} ms`);
      assert.ok(result.listeners >= 2, "this process's listener and the stand-in");
      assert.equal(result.unacknowledged, 0);
    } finally {
      await late.end();
    }
  });

  test("gives up on a listener that stays connected and silent, after the timeout", async () => {
    const silent = await standIn("never");
    try {
      const result = await timed(600);
      assert.ok(result.ms >= 600 && result.ms < 3_000, `returned after ${result.ms} ms`);
      assert.equal(result.unacknowledged, 1);
    } finally {
      await silent.end();
    }
  });

  test("a wait that cannot reach the server does not fail the command: its change is committed", async () => {
    const unreachable = await openPostgres("postgres://postgres@127.0.0.1:1/nowhere", 1_000, {
      connectTimeoutMs: 500,
    });
    try {
      await unreachable.keyChangesSeen();
    } finally {
      await unreachable.close();
    }
    await assert.rejects(
      awaitListeners("postgres://postgres@127.0.0.1:1/nowhere", { connectTimeoutMs: 500 }),
    );
  });

  test("does not wait for a listener whose connection goes away", async () => {
    await standIn("disconnect after 200 ms");
    const result = await timed(10_000);
    assert.ok(result.ms < 3_000, `returned after ${result.ms} ms`);
    assert.equal(result.unacknowledged, 0);
  });
});
