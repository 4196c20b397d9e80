import assert from "node:assert/strict";
import { test } from "node:test";
import { addDomain } from "../../src/admin/domains.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { seedAccount, useTestApp } from "../helpers/harness.ts";

const env = useTestApp({ counters: createMemoryCounterStore() });

const ask = (domain: string) =>
  env.app.inject({ method: "GET", url: `/api/tls/ask?domain=${encodeURIComponent(domain)}` });

test("the TLS ask endpoint says yes only for a registered first-party host", async () => {
  const account = await seedAccount(env.db);
  await addDomain(env.db, { account: account.accountId, host: "track.shop-ask.example.co.uk" });

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
  assert.equal((await env.app.inject({ method: "GET", url: "/api/tls/ask" })).statusCode, 404);
});
