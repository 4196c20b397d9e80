import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rotateWebhookSecret } from "../../src/admin/webhook-secret.ts";
import { rows } from "../../src/db/client.ts";
import { signPayload } from "../../src/ingest/webhook-signature.ts";
import { awayFromWindowEdge, seedAccount, testSecrets, useTestApp } from "../helpers/harness.ts";

const now = new Date("2026-03-01T12:00:00Z");
const nowSeconds = now.getTime() / 1000;

const env = useTestApp({ clock: () => now });

let ipCounter = 0;
function post(clientKey: string, body: string, signature: string | null, remoteAddress?: string) {
  ipCounter += 1;
  return env.app.inject({
    method: "POST",
    url: `/api/webhook/events?client_key=${encodeURIComponent(clientKey)}`,
    headers: {
      "content-type": "application/json",
      ...(signature ? { "x-ascribe-signature": signature } : {}),
    },
    payload: body,
    remoteAddress: remoteAddress ?? `10.20.${Math.floor(ipCounter / 250)}.${ipCounter % 250}`,
  });
}

async function accountWithSecret() {
  const account = await seedAccount(env.db);
  const { secret } = await rotateWebhookSecret(env.db, testSecrets, { account: account.accountId });
  return { ...account, secret };
}

const eventCount = (accountId: string) =>
  env.db
    .admin(accountId, (tx) =>
      rows<{ n: number }>(tx, sql`select count(*)::int as n from events where account_id = ${accountId}`),
    )
    .then((r) => r[0]?.n);

const lead = (id: string, more: Record<string, string> = {}) =>
  JSON.stringify({
    id,
    event_type: "lead",
    event_datetime: "2026-03-01T11:00:00Z",
    contact_email: `${id}@example.com`,
    ...more,
  });

describe("POST /api/webhook/events", () => {
  test("a signed event is stored after commit; a replay changes nothing; a batch is all or nothing", async () => {
    const a = await accountWithSecret();
    const body = lead("w1");
    const first = await post(a.clientKey, body, signPayload(a.secret, body, nowSeconds));
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { data: { received: 1, inserted: 1, updated: 0, unchanged: 0 } });
    assert.equal(first.headers["cache-control"], "private, no-store");
    const replay = await post(a.clientKey, body, signPayload(a.secret, body, nowSeconds - 60));
    assert.deepEqual(replay.json(), { data: { received: 1, inserted: 0, updated: 0, unchanged: 1 } });

    const batch = `[${lead("w2")},${lead("w3")}]`;
    assert.deepEqual((await post(a.clientKey, batch, signPayload(a.secret, batch, nowSeconds))).json(), {
      data: { received: 2, inserted: 2, updated: 0, unchanged: 0 },
    });
    const broken = `[${lead("w4")},{"id":"w5","event_type":"lead"}]`;
    const refused = await post(a.clientKey, broken, signPayload(a.secret, broken, nowSeconds));
    assert.equal(refused.statusCode, 400);
    assert.deepEqual(refused.json(), {
      error: "[1].event_datetime: must be an ISO 8601 date-time with a time zone",
    });
    const single = '{"id":"w6","event_type":"purchase","event_datetime":"2026-03-01T11:00:00Z"}';
    const named = await post(a.clientKey, single, signPayload(a.secret, single, nowSeconds));
    assert.equal(named.statusCode, 400);
    assert.match(named.json().error, /^event_type: /);
    assert.equal(await eventCount(a.accountId), 3);
  });

  test("events resolve against the ads as they are now: an ad written between two events is found by the second", async () => {
    const a = await accountWithSecret();
    const withAd = (id: string) => lead(id, { utm_source: "facebook", utm_ad_id: "120210000000000777" });
    const send = (body: string) => post(a.clientKey, body, signPayload(a.secret, body, nowSeconds));
    const resolution = async (id: string) =>
      (
        await env.db.admin(a.accountId, (tx) =>
          rows<{ resolution: string; resolved_ad_id: string | null }>(
            tx,
            sql`select resolution, resolved_ad_id from events where account_id = ${a.accountId} and id = ${id}`,
          ),
        )
      )[0];
    assert.equal((await send(withAd("ad1"))).statusCode, 200);
    assert.deepEqual(await resolution("ad1"), { resolution: "unresolved", resolved_ad_id: null });
    // Written behind the app's back, as another process (a spend sync, the CLI) would: the app's
    // cached index of the account's ads must not hide it.
    await env.db.admin(a.accountId, (tx) =>
      tx.execute(
        sql`insert into ads (account_id, platform, ad_id, ad_name) values (${a.accountId}, 'meta', '120210000000000777', 'Video B')`,
      ),
    );
    assert.equal((await send(withAd("ad2"))).statusCode, 200);
    assert.deepEqual(await resolution("ad2"), { resolution: "exact", resolved_ad_id: "120210000000000777" });
  });

  test("refused with 401 invalid_signature, nothing written: wrong secret, altered body, stale, unsigned", async () => {
    const a = await accountWithSecret();
    const b = await accountWithSecret();
    const body = lead("x1");
    const cases: [string, string | null, string][] = [
      [body, signPayload(b.secret, body, nowSeconds), "mismatch"],
      [body.replace("lead", "sale"), signPayload(a.secret, body, nowSeconds), "mismatch"],
      [body, signPayload(a.secret, body, nowSeconds - 301), "stale"],
      [body, null, "missing"],
      [body, "t=1,v1=zz", "malformed"],
    ];
    for (const [payload, signature, reason] of cases) {
      const res = await post(a.clientKey, payload, signature);
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: "invalid_signature", reason });
    }
    assert.equal(await eventCount(a.accountId), 0);
  });

  test("an unknown or malformed client key, or an account without a secret, is refused the same way", async () => {
    const noSecret = await seedAccount(env.db);
    const body = lead("y1");
    const cases: [string, string][] = [
      ["ck_AAAAAAAAAAAAAAAA", "unknown_client_key"],
      ["ck_'; drop table events; --", "unknown_client_key"],
      [noSecret.clientKey, "no_webhook_secret"],
    ];
    for (const [key, reason] of cases) {
      const res = await post(key, body, signPayload("whatever", body, nowSeconds));
      assert.equal(res.statusCode, 401, key);
      assert.deepEqual(res.json(), { error: "invalid_signature", reason });
    }
  });

  test("more than 20 refusals from one IP within the minute → 429", async () => {
    const a = await accountWithSecret();
    const body = lead("z1");
    await awayFromWindowEdge(60_000);
    for (let i = 0; i < 21; i++) {
      assert.equal((await post(a.clientKey, body, null, "10.99.0.1")).statusCode, 401);
    }
    const blocked = await post(a.clientKey, body, signPayload(a.secret, body, nowSeconds), "10.99.0.1");
    assert.equal(blocked.statusCode, 429);
    assert.deepEqual(blocked.json(), { error: "too_many_failed_attempts", retry_after_seconds: 60 });
  });
});
