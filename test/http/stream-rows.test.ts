import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { AccountRows } from "../../src/db/account-rows.ts";
import type { Database } from "../../src/db/client.ts";
import { markOwner } from "../../src/http/barrier.ts";
import { SERVICE_NAME } from "../../src/http/redact.ts";
import { routes } from "../../src/routes/index.ts";
import { defineRoute, type RouteDef, type RowBatches } from "../../src/routes/route-def.ts";
import { bearer, createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * A streamed list (http/stream-rows.ts) through the real pipeline over real HTTP: every batch passes
 * the tenant barrier and the redaction before it is written; a foreign row in the first batch is an
 * ordinary 500, one further on cuts the response before it; a client that leaves stops the reading.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

const FOREIGN = "acc_22222222-2222-4222-8222-222222222222";

/** A route streaming whatever `batches` yields (its handler is never asked: no limit is given). */
function streamingRoute(make: (accountId: string) => RowBatches): RouteDef {
  return defineRoute({
    methods: ["GET"],
    path: "/test/streamed",
    scope: "read:contacts",
    input: z.object({}),
    output: z.array(z.object({ n: z.number() }).passthrough()),
    description: "test route streaming its rows",
    handler: async () => [],
    stream: ({ tenant }) => make(tenant.accountId),
  });
}

const own = (accountId: string, from: number, count: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: count }, (_, i) => markOwner({ n: from + i, ...extra }, accountId));

/** The app listening on a port (the cut of a response is a socket's business, not inject's). */
async function serve<T>(route: RouteDef, fn: (base: string, key: string) => Promise<T>): Promise<T> {
  const account = await seedAccount(db);
  const key = await account.key(["read:contacts"]);
  const app = await createTestApp(db, { routes: [...routes, route] });
  await app.listen({ port: 0, host: "127.0.0.1" });
  try {
    const { port } = app.server.address() as AddressInfo;
    return await fn(`http://127.0.0.1:${port}/api/v1`, key);
  } finally {
    // fetch may keep a spare connection open that never carries a request: a stop would wait the
    // app's grace for it (http/bounded-close.ts), and nothing here is in flight any more.
    app.server.closeAllConnections();
    await app.close();
    await app.audit.close();
  }
}

describe("streamed lists", () => {
  test("batches are joined into one JSON body, each row redacted", async () => {
    const route = streamingRoute(
      (accountId) =>
        async function* () {
          yield own(accountId, 1, 2, { api_key: "sk-live-1", label: "gpt-4o" });
          yield [];
          yield own(accountId, 3, 1, { label: "plain" });
        },
    );
    await serve(route, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
      assert.equal(res.headers.get("cache-control"), "private, no-store");
      assert.equal(
        await res.text(),
        JSON.stringify({
          data: [
            { n: 1, label: SERVICE_NAME },
            { n: 2, label: SERVICE_NAME },
            { n: 3, label: "plain" },
          ],
        }),
      );
    });
  });

  test("rows straight from SQL (AccountRows): account_id left out, each row redacted", async () => {
    const route = streamingRoute(
      (accountId) =>
        async function* () {
          yield new AccountRows([
            {
              account_id: accountId,
              n: 1,
              api_key: "sk-live-1",
              label: " claude-3-opus ",
              tags: ["o3-mini", "x"],
            },
          ]);
          yield new AccountRows([]);
          yield [markOwner({ n: 2, label: "plain" }, accountId)];
          yield new AccountRows([{ account_id: accountId, n: 3, nested: { model: "m", keep: "gpt-4o" } }]);
        },
    );
    await serve(route, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 200);
      assert.equal(
        await res.text(),
        '{"data":[{"n":1,"label":"Ascribe","tags":["Ascribe","x"]},{"n":2,"label":"plain"},{"n":3,"nested":{"keep":"Ascribe"}}]}',
      );
    });
  });

  test("AccountRows: another account's row in the first batch → 500, further on → the response cut", async () => {
    const first = streamingRoute(
      (accountId) =>
        async function* () {
          yield new AccountRows([
            { account_id: accountId, n: 1 },
            { account_id: FOREIGN, n: 2, note: "OTHER-ONLY-4411" },
          ]);
        },
    );
    await serve(first, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 500);
      assert.equal(await res.text(), JSON.stringify({ error: "tenant_barrier" }));
    });
    const later = streamingRoute(
      (accountId) =>
        async function* () {
          yield new AccountRows([{ account_id: accountId, n: 1 }]);
          await sleep(100);
          yield new AccountRows([{ account_id: FOREIGN, n: 2, note: "OTHER-ONLY-4411" }]);
        },
    );
    await serve(later, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 200);
      const received = await res.text().then(
        () => assert.fail("the body ended cleanly"),
        (err: unknown) => err,
      );
      assert.ok(received instanceof Error);
    });
  });

  test("a foreign row in the first batch → 500 tenant_barrier, nothing of it sent", async () => {
    const route = streamingRoute(
      (accountId) =>
        async function* () {
          yield [...own(accountId, 1, 1), markOwner({ n: 2, secret_of_other: "OTHER-ONLY-4411" }, FOREIGN)];
        },
    );
    await serve(route, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 500);
      assert.equal(await res.text(), JSON.stringify({ error: "tenant_barrier" }));
    });
  });

  test("a foreign row further on cuts the response before its batch", async () => {
    const route = streamingRoute(
      (accountId) =>
        async function* () {
          yield own(accountId, 1, 3);
          // Time for the first batch to leave: the answer has begun (200) when the foreign row comes.
          await sleep(100);
          yield [...own(accountId, 4, 1), markOwner({ n: 5, note: "OTHER-ONLY-4411" }, FOREIGN)];
          yield own(accountId, 6, 1);
        },
    );
    await serve(route, async (base, key) => {
      const res = await fetch(`${base}/test/streamed`, { headers: bearer(key) });
      assert.equal(res.status, 200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let received = "";
      const failure = await (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return null;
            received += Buffer.from(value).toString("utf8");
          }
        } catch (err) {
          return err;
        }
      })();
      assert.ok(failure instanceof Error, "the body ends in an error, not a clean end");
      // What arrived is at most the first batch: a loaded machine (or a compressor still holding
      // it) may cut the connection before any of it reaches the client.
      assert.ok('{"data":[{"n":1},{"n":2},{"n":3}'.startsWith(received), received);
      assert.ok(!received.includes("OTHER-ONLY-4411"));
    });
  });

  test("a client that leaves stops the reading and ends the transaction", async () => {
    let produced = 0;
    let ended: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      ended = resolve;
    });
    // Endless batches, slowly: only the client leaving can end them.
    const route = streamingRoute(
      (accountId) =>
        async function* () {
          try {
            for (;;) {
              produced += 1;
              yield own(accountId, produced, 1);
              await sleep(20);
            }
          } finally {
            ended();
          }
        },
    );
    await serve(route, async (base, key) => {
      const controller = new AbortController();
      // Uncompressed: a gzip stream holds these few bytes back until it has a block's worth (minutes
      // at one row per 20 ms).
      const res = await fetch(`${base}/test/streamed`, {
        headers: { ...bearer(key), "accept-encoding": "identity" },
        signal: controller.signal,
      });
      assert.equal(res.status, 200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      controller.abort();
      await Promise.race([
        finished,
        sleep(5_000).then(() => assert.fail("the reading went on after the client left")),
      ]);
      const at = produced;
      await sleep(100);
      assert.equal(produced, at, "no batch read after the generator ended");
      // The database is free again: the transaction ended (on the embedded one, its only connection).
      assert.equal(await db.probe(async () => 1), 1);
    });
  });
});
