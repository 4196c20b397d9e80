import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { addConnector } from "../../src/admin/connectors.ts";
import { addMember } from "../../src/admin/members.ts";
import { rows } from "../../src/db/client.ts";
import { seedAccount, TEST_SITE_URL, testSecrets, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";
import { signedIn } from "../helpers/web.ts";

/*
 * The application's counterpart of the API's shared security suite: it walks every route the
 * application registered (app.webRoutes), so a page or form added later is checked too.
 */
const env = useTestApp();

/** Reachable signed out: the sign-in and reset forms, one-time links, assets. */
const PUBLIC = new Set(["/", "/sign-in", "/forgot-password", "/set-password/:token", "/assets/:hash/:name"]);

const concrete = (url: string) =>
  url
    .replace(":token", "x".repeat(43))
    .replace(":id", randomUUID())
    .replace(":hash", "000000000000")
    .replace(":name", "app.js");

const routesOf = (method: string) => env.app.webRoutes.filter((r) => r.method === method).map((r) => r.url);

async function stateOf(accountId: string): Promise<string> {
  const [found] = await env.db.admin(accountId, (tx) =>
    rows<Record<string, unknown>>(
      tx,
      sql`select
        (select count(*)::int from api_keys where account_id = ${accountId}) as keys,
        (select count(*)::int from api_keys where account_id = ${accountId} and revoked_at is not null) as revoked,
        (select count(*)::int from members where account_id = ${accountId}) as members,
        (select string_agg(role, ',' order by user_id) from members where account_id = ${accountId}) as roles,
        (select count(*)::int from tracking_hosts where account_id = ${accountId}) as hosts,
        (select count(*)::int from connectors where account_id = ${accountId}) as connectors,
        (select name || timezone from accounts where id = ${accountId}) as account,
        (select count(*)::int from web_sessions) as sessions`,
    ),
  );
  return JSON.stringify(found);
}

describe("every route of the application", () => {
  test("the suite sees every page and form", () => {
    const gets = routesOf("GET");
    const posts = routesOf("POST");
    for (const page of [
      "/",
      "/settings/api-keys",
      "/settings/members",
      "/settings/tracking",
      "/settings/connections",
      "/settings/connections/:id/remove",
      "/settings/account",
      "/reports/attribution",
      "/calls/view",
    ])
      assert.ok(gets.includes(page), page);
    for (const form of [
      "/sign-in",
      "/sign-out",
      "/settings/api-keys",
      "/settings/api-keys/:id/revoke",
      "/settings/members/remove",
      "/settings/connections",
      "/settings/connections/:id/remove",
    ])
      assert.ok(posts.includes(form), form);
    assert.ok(gets.length >= 18 && posts.length >= 10, `${gets.length} pages, ${posts.length} forms`);
  });

  test("signed out, every page but the public ones sends to the sign-in page", async () => {
    for (const url of routesOf("GET").filter((u) => !PUBLIC.has(u))) {
      const res = await env.app.inject({ method: "GET", url: concrete(url) });
      assert.equal(res.statusCode, 303, url);
      assert.match(String(res.headers.location), /^\/sign-in\?next=/, url);
    }
  });

  test("every form posted without its token, with another session's, or cross-site is refused and changes nothing", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    const other = await signedIn(env.app, env.db, (await seedAccount(env.db)).owner);
    const before = await stateOf(account.accountId);
    const fields = {
      name: "Changed",
      timezone: "Asia/Tokyo",
      scopes: "read:icp",
      full: "1",
      expires: "never",
      email: account.owner,
      role: "member",
      current: "owner",
      host: "track.changed.test",
      kind: "calendly",
      account: account.accountId,
      everywhere: "1",
      password: "a long enough password",
      confirm: "a long enough password",
    };
    for (const url of routesOf("POST")) {
      const attempts: [string, Record<string, string>, Record<string, string>][] = [
        ["signed out, no token", {}, {}],
        ["no token", { cookie: owner.cookie }, {}],
        ["another session's token", { cookie: owner.cookie }, { _csrf: other.csrf }],
        ["cross-site", { cookie: owner.cookie, "sec-fetch-site": "cross-site" }, { _csrf: owner.csrf }],
      ];
      for (const [how, headers, token] of attempts) {
        const res = await env.app.inject({
          method: "POST",
          url: concrete(url),
          headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
          payload: new URLSearchParams({ ...fields, ...token }).toString(),
        });
        assert.equal(res.statusCode, 403, `${url}, ${how}`);
      }
    }
    assert.equal(await stateOf(account.accountId), before);
    assert.equal((await owner.get("/settings/account")).statusCode, 200);
  });

  test("every answer carries the pages' security headers", async () => {
    const account = await seedAccount(env.db);
    const web = await signedIn(env.app, env.db, account.owner);
    for (const url of routesOf("GET")) {
      const res = await web.get(concrete(url));
      const where = `${url} (${res.statusCode})`;
      assert.match(String(res.headers["content-security-policy"]), /script-src 'self'/, where);
      assert.equal(res.headers["x-content-type-options"], "nosniff", where);
      assert.equal(res.headers["x-frame-options"], "DENY", where);
      assert.equal(res.headers["referrer-policy"], "no-referrer", where);
      assert.ok(res.statusCode < 500, where);
    }
  });

  test("a member of one account never sees another account's name, keys, members or contacts on any page", async () => {
    const mine = await seedAccount(env.db, { name: "Mine Co" });
    const theirs = await seedAccount(env.db, { name: "Zeta Hidden Co" });
    const theirKey = await theirs.key(["read:icp"]);
    const theirHook = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
      account: theirs.accountId,
      kind: "calendly",
    });
    await env.db.admin(theirs.accountId, (tx) =>
      addMember(tx, theirs.accountId, "hidden.member@zeta.test", "admin"),
    );
    await loadFixture(env.db, theirs.accountId, {
      events: [
        {
          id: "z1",
          event_type: "lead",
          event_datetime: at("2026-11-03"),
          contact_email: "zeta.lead@zeta.test",
        },
      ],
    });
    const web = await signedIn(env.app, env.db, mine.owner);
    const secrets = [
      "Zeta Hidden Co",
      theirKey.slice(12, 20),
      "hidden.member@zeta.test",
      "zeta.lead@zeta.test",
      theirs.owner,
      theirs.accountId,
      theirHook.id,
      theirHook.secret ?? "",
    ];
    const pages = [
      ...routesOf("GET").map(concrete),
      "/contacts?search=zeta",
      "/?from=2026-11-01&to=2026-11-30",
    ];
    for (const url of pages) {
      const res = await web.get(url);
      for (const secret of secrets) assert.ok(!res.body.includes(secret), `${url} shows ${secret}`);
    }
    const journey = await web.get("/contacts/journey?email=zeta.lead%40zeta.test");
    assert.equal(journey.statusCode, 404);
  });
});
