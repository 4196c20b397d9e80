import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { addMember } from "../../src/admin/members.ts";
import { rows } from "../../src/db/client.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";
import { signedIn } from "../helpers/web.ts";

const env = useTestApp();

async function keyCount(accountId: string): Promise<number> {
  const found = await env.db.admin(accountId, (tx) =>
    rows<{ n: number }>(tx, sql`select count(*)::int as n from api_keys where account_id = ${accountId}`),
  );
  return found[0]?.n ?? 0;
}

async function withMember(accountId: string, email: string, role: "owner" | "admin" | "member") {
  await env.db.admin(accountId, (tx) => addMember(tx, accountId, email, role));
}

const newKeyOf = (html: string) => /<code id="new-key">([^<]+)<\/code>/.exec(html)?.[1] ?? null;

describe("Settings → API keys", () => {
  test("an owner creates a read-only key, sees it once, and the API accepts it for its scopes only", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const form = await web.get("/settings/api-keys");
    // Read scopes come checked, write scopes unchecked, `*` only behind its own box.
    assert.match(form.body, /name="scopes" value="read:dashboard" checked/);
    assert.match(form.body, /name="scopes" value="write:goals"\/>/);
    assert.match(form.body, /name="full" value="1"\/>/);
    const created = await web.post("/settings/api-keys", {
      name: "reporting",
      scopes: ["read:dashboard", "read:icp"],
      expires: "90d",
    });
    assert.equal(created.statusCode, 303);
    const flash = created.headers["set-cookie"];
    const flashCookie = [flash].flat().find((c) => String(c).startsWith("ascribe_flash="));
    assert.ok(flashCookie);
    const headers = { cookie: `${web.cookie}; ${String(flashCookie).split(";")[0]}` };
    const shown = await env.app.inject({ method: "GET", url: "/settings/api-keys", headers });
    const key = newKeyOf(shown.body) ?? "";
    assert.ok(key.startsWith("svc_sk_live_"), shown.body.slice(0, 300));
    assert.match(shown.body, /shown only this once/);
    // The flash is cleared as it is shown: a reload no longer has the key.
    assert.match(String(shown.headers["set-cookie"]), /ascribe_flash=;/);
    const reloaded = await web.get("/settings/api-keys");
    assert.equal(newKeyOf(reloaded.body), null);
    assert.ok(!reloaded.body.includes(key));
    assert.match(reloaded.body, new RegExp(`<code>${key.slice(12, 20)}</code>`));
    assert.match(reloaded.body, /read:dashboard, read:icp/);

    const ok = await env.app.inject({ method: "GET", url: "/api/v1/dashboard/kpis", headers: bearer(key) });
    assert.equal(ok.statusCode, 200);
    const denied = await env.app.inject({ method: "GET", url: "/api/v1/attribution", headers: bearer(key) });
    assert.equal(denied.statusCode, 403);
    assert.equal(denied.json().required, "read:attribution");
  });

  test("revoking needs a confirmation, and the API refuses the key on its very next request", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:icp"]);
    const web = await signedIn(env.app, env.db, account.owner);
    const list = await web.get("/settings/api-keys");
    const id = /href="\/settings\/api-keys\/([0-9a-f-]{36})\/revoke"/.exec(list.body)?.[1];
    assert.ok(id);
    const confirm = await web.get(`/settings/api-keys/${id}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /This cannot be undone/);
    assert.equal(
      (await env.app.inject({ method: "GET", url: "/api/v1/icp/criteria", headers: bearer(key) })).statusCode,
      200,
    );
    const revoked = await web.post(`/settings/api-keys/${id}/revoke`, {});
    assert.equal(revoked.statusCode, 303);
    const next = await env.app.inject({ method: "GET", url: "/api/v1/icp/criteria", headers: bearer(key) });
    assert.equal(next.statusCode, 401);
    assert.match((await web.get("/settings/api-keys")).body, /revoked \d{4}-\d{2}-\d{2}/);
  });

  test("`*` is granted only with its own box; a form without any scope is refused with the reason", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const none = await web.post("/settings/api-keys", { name: "empty", expires: "never" });
    assert.equal(none.statusCode, 400);
    assert.match(none.body, /at least one scope/);
    const bogus = await web.post("/settings/api-keys", {
      name: "x",
      scopes: "read:everything",
      expires: "never",
    });
    assert.equal(bogus.statusCode, 400);
    assert.match(bogus.body, /unknown scope read:everything/);
    const before = await keyCount(account.accountId);
    const full = await web.post("/settings/api-keys", {
      name: "all",
      scopes: "read:icp",
      full: "1",
      expires: "1y",
    });
    assert.equal(full.statusCode, 303);
    assert.equal(await keyCount(account.accountId), before + 1);
    assert.match((await web.get("/settings/api-keys")).body, /<td>\*<\/td>/);
  });

  test("a member sees the list but no create or revoke control, and forged posts are refused", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:icp"]);
    const member = `member.${account.accountId.slice(0, 8)}@example.com`;
    await withMember(account.accountId, member, "member");
    const web = await signedIn(env.app, env.db, member);
    const page = await web.get("/settings/api-keys");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`<code>${key.slice(12, 20)}</code>`));
    assert.doesNotMatch(page.body, /Create key/);
    assert.doesNotMatch(page.body, /\/revoke"/);
    const before = await keyCount(account.accountId);
    const forged = await web.post("/settings/api-keys", { name: "x", scopes: "read:icp", expires: "never" });
    assert.equal(forged.statusCode, 403);
    assert.equal(await keyCount(account.accountId), before);
    const owner = await signedIn(env.app, env.db, account.owner);
    const id = /href="\/settings\/api-keys\/([0-9a-f-]{36})\/revoke"/.exec(
      (await owner.get("/settings/api-keys")).body,
    )?.[1];
    const forgedRevoke = await web.post(`/settings/api-keys/${id}/revoke`, {});
    assert.equal(forgedRevoke.statusCode, 403);
    assert.equal(
      (await env.app.inject({ method: "GET", url: "/api/v1/icp/criteria", headers: bearer(key) })).statusCode,
      200,
    );
  });

  test("on the free plan the page explains plan_free_no_api instead of the form, and a forged post creates nothing", async () => {
    const account = await seedAccount(env.db);
    await account.setPlan("free");
    const web = await signedIn(env.app, env.db, account.owner);
    const page = await web.get("/settings/api-keys");
    assert.match(page.body, /plan_free_no_api/);
    assert.doesNotMatch(page.body, /Create key/);
    const forged = await web.post("/settings/api-keys", { name: "x", scopes: "read:icp", expires: "never" });
    assert.equal(forged.statusCode, 403);
    assert.match(forged.body, /free plan/);
    assert.equal(await keyCount(account.accountId), 0);
  });

  test("a form without the session's CSRF token, or sent cross-site, changes nothing", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      env.app.inject({
        method: "POST",
        url: "/settings/api-keys",
        headers: { cookie: web.cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
        payload: new URLSearchParams(fields).toString(),
      });
    const fields = { name: "csrf", scopes: "read:icp", expires: "never" };
    assert.equal((await post(fields)).statusCode, 403);
    assert.equal((await post({ ...fields, _csrf: "x".repeat(43) })).statusCode, 403);
    assert.equal(
      (await post({ ...fields, _csrf: web.csrf }, { "sec-fetch-site": "cross-site" })).statusCode,
      403,
    );
    assert.equal(await keyCount(account.accountId), 0);
    assert.equal(
      (await post({ ...fields, _csrf: web.csrf }, { "sec-fetch-site": "same-origin" })).statusCode,
      303,
    );
  });
});

describe("one person in two accounts", () => {
  test("sees only the current account's keys and figures, and switches only to an account of theirs", async () => {
    const first = await seedAccount(env.db, { name: "Alpha Co" });
    const second = await seedAccount(env.db, { name: "Beta Co" });
    const stranger = await seedAccount(env.db, { name: "Gamma Co" });
    await withMember(second.accountId, first.owner, "member");
    const alphaKey = await first.key(["read:icp"]);
    const betaKey = await second.key(["read:icp"]);
    const gammaKey = await stranger.key(["read:icp"]);
    const web = await signedIn(env.app, env.db, first.owner);
    const prefix = (k: string) => `<code>${k.slice(12, 20)}</code>`;
    const onAlpha = (await web.get("/settings/api-keys")).body;
    assert.ok(onAlpha.includes(prefix(alphaKey)));
    assert.ok(!onAlpha.includes(prefix(betaKey)));
    assert.match(onAlpha, /<option value="[^"]+" selected>Alpha Co<\/option>/);
    assert.equal((await web.post("/switch-account", { account: second.accountId })).statusCode, 303);
    const onBeta = (await web.get("/settings/api-keys")).body;
    assert.ok(onBeta.includes(prefix(betaKey)));
    assert.ok(!onBeta.includes(prefix(alphaKey)));
    // As a member of Beta, no create form there.
    assert.doesNotMatch(onBeta, /Create key/);
    // Not a member of Gamma: the switch does nothing.
    await web.post("/switch-account", { account: stranger.accountId });
    const still = (await web.get("/settings/api-keys")).body;
    assert.ok(still.includes(prefix(betaKey)));
    assert.ok(!still.includes(prefix(gammaKey)));
    assert.doesNotMatch(still, /Gamma Co/);
  });
});

describe("Settings → members", () => {
  test("an owner invites with a role, sees the one-time link, changes the role and removes", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const invited = await web.post("/settings/members", { email: "New.Hire@Example.com", role: "admin" });
    assert.equal(invited.statusCode, 303);
    const flash = [invited.headers["set-cookie"]].flat().find((c) => String(c).startsWith("ascribe_flash="));
    const page = await env.app.inject({
      method: "GET",
      url: "/settings/members",
      headers: { cookie: `${web.cookie}; ${String(flash).split(";")[0]}` },
    });
    assert.match(page.body, /new\.hire@example\.com is invited/);
    assert.match(
      page.body,
      /<code id="invite-url">http:\/\/localhost:3000\/set-password\/[A-Za-z0-9_-]{43}<\/code>/,
    );
    assert.match(page.body, /<option value="admin" selected>admin<\/option>/);
    const changed = await web.post("/settings/members/role", {
      email: "new.hire@example.com",
      role: "member",
      current: "admin",
    });
    assert.equal(changed.statusCode, 303);
    assert.match((await web.get("/settings/members")).body, /Role of new\.hire@example\.com/);
    const removed = await web.post("/settings/members/remove", { email: "new.hire@example.com" });
    assert.equal(removed.statusCode, 303);
    assert.doesNotMatch((await web.get("/settings/members")).body, /new\.hire@example\.com/);
  });

  test("the last owner can neither be demoted nor removed; with a second owner they can", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const demote = await web.post("/settings/members/role", {
      email: account.owner,
      role: "admin",
      current: "owner",
    });
    assert.equal(demote.statusCode, 403);
    assert.match(demote.body, /the last owner can neither leave nor be demoted/);
    const leave = await web.post("/settings/members/remove", { email: account.owner });
    assert.equal(leave.statusCode, 403);
    await web.post("/settings/members", { email: "second.owner@example.com", role: "owner" });
    assert.equal(
      (await web.post("/settings/members/role", { email: account.owner, role: "admin", current: "owner" }))
        .statusCode,
      303,
    );
  });

  test("a removed member's very next page no longer shows the account; a demoted admin loses the forms", async () => {
    const account = await seedAccount(env.db);
    const admin = `leaving.${account.accountId.slice(0, 8)}@example.com`;
    await withMember(account.accountId, admin, "admin");
    const asAdmin = await signedIn(env.app, env.db, admin);
    assert.match((await asAdmin.get("/settings/members")).body, /Invite someone/);
    const owner = await signedIn(env.app, env.db, account.owner);
    await owner.post("/settings/members/role", { email: admin, role: "member", current: "admin" });
    assert.doesNotMatch((await asAdmin.get("/settings/members")).body, /Invite someone/);
    await owner.post("/settings/members/remove", { email: admin });
    const after = await asAdmin.get("/settings/api-keys");
    assert.equal(after.statusCode, 403);
    assert.match(after.body, /no longer belong to any account/);
  });

  test("an administrator cannot make owners, and a member cannot invite", async () => {
    const account = await seedAccount(env.db);
    const admin = `admin.${account.accountId.slice(0, 8)}@example.com`;
    const member = `member.${account.accountId.slice(0, 8)}@example.com`;
    await withMember(account.accountId, admin, "admin");
    await withMember(account.accountId, member, "member");
    const asAdmin = await signedIn(env.app, env.db, admin);
    const makeOwner = await asAdmin.post("/settings/members", { email: "x@example.com", role: "owner" });
    assert.equal(makeOwner.statusCode, 403);
    const demoteOwner = await asAdmin.post("/settings/members/remove", { email: account.owner });
    assert.equal(demoteOwner.statusCode, 403);
    const asMember = await signedIn(env.app, env.db, member);
    assert.doesNotMatch((await asMember.get("/settings/members")).body, /Invite someone/);
    assert.equal(
      (await asMember.post("/settings/members", { email: "y@example.com", role: "member" })).statusCode,
      403,
    );
  });
});

describe("Settings → account", () => {
  test("shows the plan; an owner renames the account and sets its timezone; a bad timezone is refused", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    const page = await web.get("/settings/account");
    assert.match(page.body, /<dt>Plan<\/dt><dd>pro<\/dd>/);
    assert.match(page.body, /<option value="UTC" selected>UTC<\/option>/);
    const saved = await web.post("/settings/account", { name: "Renamed Co", timezone: "Europe/Paris" });
    assert.equal(saved.statusCode, 303);
    const after = await web.get("/settings/account");
    assert.match(after.body, /value="Renamed Co"/);
    assert.match(after.body, /<option value="Europe\/Paris" selected>/);
    const bad = await web.post("/settings/account", { name: "Renamed Co", timezone: "Mars/Olympus" });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /unknown IANA timezone/);
  });
});
