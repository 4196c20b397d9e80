import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { addDomain } from "../../src/admin/domains.ts";
import type { Database } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;
let app: Awaited<ReturnType<typeof createTestApp>>;
before(async () => {
  db = await openTestDatabase();
  app = await createTestApp(db, { counters: createMemoryCounterStore() });
});
after(async () => {
  await app.close();
  await app.audit.close();
  await db.close();
});

const ask = (domain: string) =>
  app.inject({ method: "GET", url: `/api/tls/ask?domain=${encodeURIComponent(domain)}` });

test("the TLS ask endpoint says yes only for a registered first-party host", async () => {
  const account = await seedAccount(db);
  await addDomain(db, { account: account.accountId, host: "track.shop-ask.example.co.uk" });

  const yes = await ask("track.shop-ask.example.co.uk");
  assert.equal(yes.statusCode, 200);
  assert.deepEqual(yes.json(), { domain: "track.shop-ask.example.co.uk", registered: true });
  // As a proxy may spell it: upper case, a trailing dot.
  assert.equal((await ask("TRACK.Shop-Ask.example.co.uk.")).statusCode, 200);

  for (const other of [
    "shop-ask.example.co.uk",
    "evil.track.shop-ask.example.co.uk",
    "nobody.example.com",
    "",
    "a b",
    "localhost",
  ]) {
    const no = await ask(other);
    assert.equal(no.statusCode, 404, other);
    assert.equal(no.json().registered, false);
  }
  assert.equal((await app.inject({ method: "GET", url: "/api/tls/ask" })).statusCode, 404);
});
