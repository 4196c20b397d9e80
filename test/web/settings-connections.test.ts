import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { addConnector, connectorSecretContext } from "../../src/admin/connectors.ts";
import { addMember } from "../../src/admin/members.ts";
import { createSecretBox } from "../../src/crypto/secret-box.ts";
import { rows } from "../../src/db/client.ts";
import { seedAccount, TEST_SITE_URL, testSecrets, useTestApp } from "../helpers/harness.ts";
import { signedIn, type WebSession } from "../helpers/web.ts";

const env = useTestApp();

const STRIPE_SECRET = "whsec_test0123456789abcdef";
const META_TOKEN = "EAAmetaToken0123456789";

async function connectorsOf(accountId: string): Promise<{ id: string; kind: string; sealed: string }[]> {
  return env.db.admin(accountId, (tx) =>
    rows<{ id: string; kind: string; sealed: string }>(
      tx,
      sql`select id::text as id, kind, coalesce(secret_sealed, credentials_sealed) as sealed
          from connectors where account_id = ${accountId} order by created_at, id`,
    ),
  );
}

async function withMember(accountId: string, email: string, role: "owner" | "admin" | "member") {
  await env.db.admin(accountId, (tx) => addMember(tx, accountId, email, role));
}

/** Posts the add form and opens the page the redirect leads to, with the flash it set. */
async function addAndShow(web: WebSession, fields: Record<string, string>) {
  const posted = await web.post("/settings/connections", fields);
  assert.equal(posted.statusCode, 303, posted.body.slice(0, 500));
  const flash = [posted.headers["set-cookie"]].flat().find((c) => String(c).startsWith("ascribe_flash="));
  assert.ok(flash);
  const shown = await env.app.inject({
    method: "GET",
    url: "/settings/connections",
    headers: { cookie: `${web.cookie}; ${String(flash).split(";")[0]}` },
  });
  assert.equal(shown.statusCode, 200);
  assert.match(String(shown.headers["set-cookie"]), /ascribe_flash=;/);
  return shown.body;
}

const shownSecret = (html: string) => /<code id="new-secret">([^<]+)<\/code>/.exec(html)?.[1] ?? null;
const shownHookUrl = (html: string) => /<code id="new-hook-url">([^<]+)<\/code>/.exec(html)?.[1] ?? null;

/** The table row of one connection, its cells' text. */
function rowOf(html: string, id: string): string[] {
  const row = html.split("<tr>").find((r) => r.includes(`<code>${id}</code>`));
  assert.ok(row, `no row for ${id}`);
  return [...row.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => (m[1] ?? "").replace(/<[^>]+>/g, ""));
}

describe("Settings → connections: the list", () => {
  test("shows kind, hook URL, created, last event, last sync, last error with its time, and a status", async () => {
    const account = await seedAccount(env.db, { timezone: "Europe/Paris" });
    const add = (input: Omit<Parameters<typeof addConnector>[3], "account">) =>
      addConnector(env.db, testSecrets, TEST_SITE_URL, { account: account.accountId, ...input });
    const stripe = await add({ kind: "stripe", secret: STRIPE_SECRET });
    const calendly = await add({ kind: "calendly" });
    const meta = await add({ kind: "meta", adAccountId: "act_1234567", accessToken: META_TOKEN });
    const calcom = await add({ kind: "calcom" });
    const google = await add({
      kind: "google",
      customerId: "123-456-7890",
      developerToken: "devtoken123",
      clientId: "client123.apps",
      clientSecret: "clientsecret123",
      refreshToken: "1//refresh123",
    });
    const set = (id: string, fields: ReturnType<typeof sql>) =>
      env.db.admin(account.accountId, (tx) =>
        tx.execute(
          sql`update connectors set ${fields} where account_id = ${account.accountId} and id = ${id}::uuid`,
        ),
      );
    await set(
      stripe.id,
      sql`created_at = '2026-02-27T09:00:00Z', last_event_at = '2026-03-01T10:00:00Z',
          last_error = 'signature: mismatch', last_error_at = '2026-03-01T11:05:00Z'`,
    );
    await set(
      calendly.id,
      sql`created_at = '2026-02-28T23:30:00Z', last_event_at = '2026-03-02T09:30:00Z',
          last_error = 'signature: stale', last_error_at = '2026-03-01T08:00:00Z'`,
    );
    await set(meta.id, sql`created_at = '2026-03-01T00:00:00Z', last_sync_at = '2026-03-03T06:15:00Z'`);
    await set(
      google.id,
      sql`created_at = '2026-03-01T00:00:00Z',
          last_error = 'Google refused the refresh token (invalid_grant)', last_error_at = '2026-03-04T12:00:00Z'`,
    );
    await set(calcom.id, sql`created_at = '2026-03-01T00:00:00Z'`);

    const web = await signedIn(env.app, env.db, account.owner);
    const page = await web.get("/settings/connections");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/settings\/connections" aria-current="page">Connections<\/a>/);
    // Times in the account's timezone (Paris is UTC+1 in March).
    assert.deepEqual(rowOf(page.body, stripe.id), [
      "Stripe",
      stripe.id,
      `http://localhost:3000/api/hooks/stripe/${stripe.id}`,
      "2026-02-27 10:00",
      "2026-03-01 11:00",
      "—",
      "2026-03-01 12:05: signature: mismatch (current)",
      "failing: the last error is newer than the last event or sync",
      "Remove",
    ]);
    assert.deepEqual(rowOf(page.body, calendly.id), [
      "Calendly",
      calendly.id,
      `http://localhost:3000/api/hooks/calendly/${calendly.id}`,
      "2026-03-01 00:30",
      "2026-03-02 10:30",
      "—",
      "2026-03-01 09:00: signature: stale (since resolved)",
      "ok",
      "Remove",
    ]);
    assert.deepEqual(rowOf(page.body, meta.id), [
      "Meta Ads",
      meta.id,
      "— (sync)",
      "2026-03-01 01:00",
      "—",
      "2026-03-03 07:15",
      "—",
      "ok",
      "Remove",
    ]);
    assert.deepEqual(rowOf(page.body, google.id).slice(0, 8), [
      "Google Ads",
      google.id,
      "— (sync)",
      "2026-03-01 01:00",
      "—",
      "—",
      "2026-03-04 13:00: Google refused the refresh token (invalid_grant) (current)",
      "failing: the last error is newer than the last event or sync",
    ]);
    assert.equal(rowOf(page.body, calcom.id)[7], "never received");
    // No secret or credential, ever, outside the one-time display.
    for (const secret of [
      STRIPE_SECRET,
      calendly.secret ?? "x",
      calcom.secret ?? "x",
      META_TOKEN,
      "devtoken123",
    ])
      assert.ok(!page.body.includes(secret), secret);
  });

  test("an account without connections says so; a spend connection never synced says that", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    assert.match((await web.get("/settings/connections")).body, /<td colSpan="9">No connection yet.<\/td>/i);
    const meta = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: account.accountId,
      kind: "meta",
      adAccountId: "123",
      accessToken: META_TOKEN,
    });
    assert.equal(rowOf((await web.get("/settings/connections")).body, meta.id)[7], "never synced");
  });

  test("a connection sealed with keys this instance no longer has is failing, and says why", async () => {
    const account = await seedAccount(env.db);
    const lostKeys = createSecretBox([{ id: "test", key: Buffer.alloc(32, 4) }]);
    const stripe = await addConnector(env.db, lostKeys, TEST_SITE_URL, {
      account: account.accountId,
      kind: "stripe",
      secret: STRIPE_SECRET,
    });
    const web = await signedIn(env.app, env.db, account.owner);
    assert.equal(
      rowOf((await web.get("/settings/connections")).body, stripe.id)[7],
      "failing: its sealed secret does not open with this instance's keys (ASCRIBE_SECRET_KEYS)",
    );
  });
});

describe("Settings → connections: adding", () => {
  test("an owner adds Stripe with its whsec_, sees hook URL and secret once, and the set-up pointer", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const shown = await addAndShow(web, { kind: "stripe", secret: STRIPE_SECRET });
    const [stored] = await connectorsOf(account.accountId);
    assert.ok(stored);
    assert.equal(stored.kind, "stripe");
    assert.equal(shownHookUrl(shown), `http://localhost:3000/api/hooks/stripe/${stored.id}`);
    assert.equal(shownSecret(shown), STRIPE_SECRET);
    assert.match(shown, /shown only this once/);
    assert.match(shown, /<code>docs\/connectors\.md<\/code>, “Stripe → Set-up”/);
    const reloaded = await web.get("/settings/connections");
    assert.equal(shownSecret(reloaded.body), null);
    assert.ok(!reloaded.body.includes(STRIPE_SECRET));
    assert.equal(rowOf(reloaded.body, stored.id)[7], "never received");
  });

  test("Calendly and Cal.com get a generated secret, shown once, the one that is sealed", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    for (const [kind, section] of [
      ["calendly", "Calendly → Set-up"],
      ["calcom", "Cal.com → Set-up"],
    ] as const) {
      const shown = await addAndShow(web, { kind, secret: "" });
      const stored = (await connectorsOf(account.accountId)).find((c) => c.kind === kind);
      assert.ok(stored);
      const secret = shownSecret(shown) ?? "";
      assert.match(secret, /^whsec_[A-Za-z0-9_-]{32}$/);
      assert.equal(
        testSecrets.open(stored.sealed, connectorSecretContext(account.accountId, stored.id)),
        secret,
      );
      assert.equal(shownHookUrl(shown), `http://localhost:3000/api/hooks/${kind}/${stored.id}`);
      assert.ok(shown.includes(`“${section}”`), section);
      assert.ok(!(await web.get("/settings/connections")).body.includes(secret));
    }
  });

  test("Meta Ads: ad account and token sealed, neither shown; no hook URL, the sync's set-up", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const shown = await addAndShow(web, {
      kind: "meta",
      secret: "",
      adAccountId: "act_987654",
      accessToken: META_TOKEN,
      customerId: "",
    });
    const [stored] = await connectorsOf(account.accountId);
    assert.ok(stored);
    assert.equal(stored.kind, "meta");
    assert.deepEqual(
      JSON.parse(testSecrets.open(stored.sealed, connectorSecretContext(account.accountId, stored.id))),
      {
        platform: "meta",
        adAccountId: "987654",
        accessToken: META_TOKEN,
      },
    );
    assert.match(shown, new RegExp(`Meta Ads connection <code>${stored.id}</code> added\\.`));
    assert.equal(shownSecret(shown), null);
    assert.equal(shownHookUrl(shown), null);
    assert.ok(!shown.includes(META_TOKEN));
    assert.match(shown, /“Meta Ads spend sync → Set-up”/);
  });

  test("a bad field is a 400 naming it in the form's words; nothing is created and no credential echoed", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const cases: [Record<string, string>, string][] = [
      [
        { kind: "stripe" },
        "Stripe issues the signing secret: pass the endpoint's whsec_… with “Signing secret”",
      ],
      [
        { kind: "stripe", secret: "sk_live_nope" },
        "Signing secret: must be a Stripe signing secret (whsec_…)",
      ],
      [{ kind: "meta", adAccountId: "act_123" }, "“Access token” is required for Meta Ads"],
      [
        { kind: "meta", adAccountId: "my account", accessToken: META_TOKEN },
        "“Ad account id” must be the ad account's number (act_123… or 123…)",
      ],
      [
        { kind: "meta", adAccountId: "act_123", accessToken: META_TOKEN, customerId: "123-456-7890" },
        "“Customer id” does not apply to Meta Ads",
      ],
      [{ kind: "google", customerId: "123-456-7890" }, "“Developer token” is required for Google Ads"],
      [{ kind: "zapier" }, "Kind: "],
    ];
    for (const [fields, message] of cases) {
      const res = await web.post("/settings/connections", fields);
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.ok(
        res.body.includes(message),
        `${JSON.stringify(fields)}: ${/role="alert">(.*?)<\/div>/.exec(res.body)?.[1]}`,
      );
      assert.ok(!res.body.includes(META_TOKEN), "a credential posted is not rendered back");
      assert.ok(!res.body.includes("sk_live_nope"));
    }
    // The ids come back in the form so they need not be typed again.
    const again = await web.post("/settings/connections", { kind: "meta", adAccountId: "act_555" });
    assert.match(again.body, /<option value="meta" selected>/);
    assert.match(
      again.body,
      /name="adAccountId" type="text" autocomplete="off" maxlength="100" value="act_555"/,
    );
    assert.deepEqual(await connectorsOf(account.accountId), []);
  });

  test("an administrator adds too", async () => {
    const account = await seedAccount(env.db);
    const admin = `admin.${account.accountId.slice(0, 8)}@example.com`;
    await withMember(account.accountId, admin, "admin");
    const web = await signedIn(env.app, env.db, admin);
    assert.match((await web.get("/settings/connections")).body, /Add connection/);
    assert.equal((await web.post("/settings/connections", { kind: "calendly" })).statusCode, 303);
    assert.equal((await connectorsOf(account.accountId)).length, 1);
  });
});

describe("Settings → connections: who may change them", () => {
  test("a member sees the list but no form or remove link, and forged posts are refused and change nothing", async () => {
    const account = await seedAccount(env.db);
    const kept = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: account.accountId,
      kind: "calendly",
    });
    const member = `member.${account.accountId.slice(0, 8)}@example.com`;
    await withMember(account.accountId, member, "member");
    const web = await signedIn(env.app, env.db, member);
    const page = await web.get("/settings/connections");
    assert.equal(page.statusCode, 200);
    assert.equal(rowOf(page.body, kept.id).length, 8, "no actions column");
    assert.doesNotMatch(page.body, /Add connection/);
    assert.doesNotMatch(page.body, /\/remove"/);
    assert.match(page.body, /Only the account's owners and administrators add and remove connections/);
    const forged = await web.post("/settings/connections", { kind: "stripe", secret: STRIPE_SECRET });
    assert.equal(forged.statusCode, 403);
    assert.match(forged.body, /Only the account's owners and administrators can do this/);
    const confirm = await web.get(`/settings/connections/${kept.id}/remove`);
    assert.equal(confirm.statusCode, 303);
    assert.equal(confirm.headers.location, "/settings/connections");
    const forgedRemove = await web.post(`/settings/connections/${kept.id}/remove`, {});
    assert.equal(forgedRemove.statusCode, 403);
    assert.deepEqual(
      (await connectorsOf(account.accountId)).map((c) => c.id),
      [kept.id],
    );
  });

  test("a form without the session's CSRF token, or sent cross-site, changes nothing", async () => {
    const account = await seedAccount(env.db);
    const kept = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: account.accountId,
      kind: "calcom",
    });
    const web = await signedIn(env.app, env.db, account.owner);
    const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      env.app.inject({
        method: "POST",
        url,
        headers: { cookie: web.cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
        payload: new URLSearchParams(fields).toString(),
      });
    const add = { kind: "calendly" };
    const remove = `/settings/connections/${kept.id}/remove`;
    for (const url of ["/settings/connections", remove]) {
      assert.equal((await post(url, add)).statusCode, 403, url);
      assert.equal((await post(url, { ...add, _csrf: "x".repeat(43) })).statusCode, 403, url);
      assert.equal(
        (await post(url, { ...add, _csrf: web.csrf }, { "sec-fetch-site": "cross-site" })).statusCode,
        403,
        url,
      );
    }
    assert.deepEqual(
      (await connectorsOf(account.accountId)).map((c) => c.id),
      [kept.id],
    );
    assert.equal(
      (await post("/settings/connections", { ...add, _csrf: web.csrf }, { "sec-fetch-site": "same-origin" }))
        .statusCode,
      303,
    );
  });
});

describe("Settings → connections: removing, and tenancy", () => {
  test("removing asks first; afterwards the hook URL answers 404 and the list no longer has it", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const shown = await addAndShow(web, { kind: "calcom" });
    const hook = shownHookUrl(shown) ?? "";
    const secret = shownSecret(shown) ?? "";
    const id = hook.split("/").at(-1) ?? "";
    const ping = JSON.stringify({ triggerEvent: "PING", createdAt: "2026-03-01T10:00:00.000Z", payload: {} });
    const deliver = () =>
      env.app.inject({
        method: "POST",
        url: new URL(hook).pathname,
        headers: {
          "content-type": "application/json",
          "x-cal-signature-256": createHmac("sha256", secret).update(ping).digest("hex"),
        },
        payload: ping,
      });
    // The secret shown is the one the hook checks: Cal.com's ping test passes.
    assert.equal((await deliver()).statusCode, 200);

    const list = await web.get("/settings/connections");
    assert.match(list.body, new RegExp(`href="/settings/connections/${id}/remove"`));
    const confirm = await web.get(`/settings/connections/${id}/remove`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Remove the Cal\.com connection/);
    assert.match(confirm.body, /This cannot be undone/);
    assert.equal((await connectorsOf(account.accountId)).length, 1, "the confirmation page deletes nothing");

    const removed = await web.post(`/settings/connections/${id}/remove`, {});
    assert.equal(removed.statusCode, 303);
    assert.equal(removed.headers.location, "/settings/connections");
    assert.deepEqual(await connectorsOf(account.accountId), []);
    assert.equal((await deliver()).statusCode, 404);
    const flash = [removed.headers["set-cookie"]].flat().find((c) => String(c).startsWith("ascribe_flash="));
    const after = await env.app.inject({
      method: "GET",
      url: "/settings/connections",
      headers: { cookie: `${web.cookie}; ${String(flash).split(";")[0]}` },
    });
    assert.match(after.body, new RegExp(`Cal\\.com connection <code>${id}</code> removed`));
    assert.match(after.body, /No connection yet/);
    // Removing it again: nothing to remove.
    assert.equal((await web.post(`/settings/connections/${id}/remove`, {})).statusCode, 404);
  });

  test("another account's connection is not found, neither listed nor removed", async () => {
    const mine = await seedAccount(env.db);
    const theirs = await seedAccount(env.db);
    const their = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: theirs.accountId,
      kind: "stripe",
      secret: STRIPE_SECRET,
    });
    const web = await signedIn(env.app, env.db, mine.owner);
    assert.ok(!(await web.get("/settings/connections")).body.includes(their.id));
    const confirm = await web.get(`/settings/connections/${their.id}/remove`);
    assert.equal(confirm.statusCode, 404);
    assert.match(confirm.body, /This account has no such connection/);
    const removed = await web.post(`/settings/connections/${their.id}/remove`, {});
    assert.equal(removed.statusCode, 404);
    assert.equal((await web.post("/settings/connections/not-a-uuid/remove", {})).statusCode, 404);
    assert.deepEqual(
      (await connectorsOf(theirs.accountId)).map((c) => c.id),
      [their.id],
    );
  });

  test("one person in two accounts sees and changes only the current account's connections", async () => {
    const first = await seedAccount(env.db);
    const second = await seedAccount(env.db);
    await withMember(second.accountId, first.owner, "admin");
    const web = await signedIn(env.app, env.db, first.owner);
    const alpha = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: first.accountId,
      kind: "calendly",
    });
    assert.equal((await web.post("/switch-account", { account: second.accountId })).statusCode, 303);
    const onBeta = (await web.get("/settings/connections")).body;
    assert.ok(!onBeta.includes(alpha.id));
    assert.equal((await web.post(`/settings/connections/${alpha.id}/remove`, {})).statusCode, 404);
    assert.equal((await web.post("/settings/connections", { kind: "calcom" })).statusCode, 303);
    assert.deepEqual(
      (await connectorsOf(first.accountId)).map((c) => c.kind),
      ["calendly"],
    );
    assert.deepEqual(
      (await connectorsOf(second.accountId)).map((c) => c.kind),
      ["calcom"],
    );
  });
});
