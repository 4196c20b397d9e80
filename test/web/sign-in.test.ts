import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inviteMember } from "../../src/admin/members.ts";
import { buildApp } from "../../src/app.ts";
import { createAuditWriter } from "../../src/http/audit.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { keyStoreFor } from "../../src/main.ts";
import { printOnlyMailer } from "../../src/people/mailer.ts";
import { routes } from "../../src/routes/index.ts";
import {
  createTestFiles,
  seedAccount,
  silentLogger,
  TEST_SITE_URL,
  testSecrets,
  useTestApp,
} from "../helpers/harness.ts";

let now = new Date("2026-11-20T10:00:00Z");
const env = useTestApp({ clock: () => now, counters: createMemoryCounterStore() });
const PASSWORD = "a long enough password";

function cookiesOf(res: { headers: Record<string, unknown> }): string[] {
  const set = res.headers["set-cookie"];
  return set === undefined ? [] : ([set].flat() as string[]);
}

function cookieValue(res: { headers: Record<string, unknown> }, name: string): string | null {
  for (const c of cookiesOf(res)) {
    const match = new RegExp(`^${name}=([^;]*)`).exec(c);
    if (match) return match[1] ?? "";
  }
  return null;
}

/** A signed-out form: its CSRF field and the form cookie that must come back with it. */
async function openForm(path: string) {
  const page = await env.app.inject({ method: "GET", url: path });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  const formCookie = cookieValue(page, "ascribe_form") ?? "";
  return { page, csrf, cookie: `ascribe_form=${formCookie}` };
}

function postForm(
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return env.app.inject({
    method: "POST",
    url: path,
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** A member invited by the CLI's path, who chose PASSWORD through the one-time link. */
async function memberWithPassword(email?: string) {
  const account = await seedAccount(env.db, email ? { owner: email } : {});
  const invited = await inviteMember(
    { db: env.db, mailer: printOnlyMailer, siteUrl: () => TEST_SITE_URL },
    { account: account.accountId, email: account.owner, role: "owner" },
    now,
  );
  const path = new URL(invited.invite_url).pathname;
  const form = await openForm(path);
  const set = await postForm(path, form.cookie, { _csrf: form.csrf, password: PASSWORD, confirm: PASSWORD });
  assert.equal(set.statusCode, 303);
  return { account, email: account.owner, linkPath: path };
}

async function signIn(email: string, password: string, headers: Record<string, string> = {}) {
  const form = await openForm("/sign-in");
  return postForm(
    "/sign-in",
    form.cookie,
    { _csrf: form.csrf, email, password, next: "/settings/api-keys" },
    headers,
  );
}

describe("the application's sign-in", () => {
  test("signed out, / is the sign-in form and the settings pages redirect to it", async () => {
    const home = await env.app.inject({ method: "GET", url: "/" });
    assert.equal(home.statusCode, 200);
    assert.match(home.body, /<form method="post" action="\/sign-in"/);
    for (const path of [
      "/settings/api-keys",
      "/settings/members",
      "/settings/tracking",
      "/settings/account",
    ]) {
      const res = await env.app.inject({ method: "GET", url: path });
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, `/sign-in?next=${encodeURIComponent(path)}`);
    }
  });

  test("a one-time link sets the password once, signs in, and a second use is refused", async () => {
    const { linkPath } = await memberWithPassword();
    const again = await env.app.inject({ method: "GET", url: linkPath });
    assert.equal(again.statusCode, 410);
  });

  test("the right password signs in with a new session cookie: HttpOnly, SameSite=Lax, not Secure on http", async () => {
    const { email } = await memberWithPassword();
    const res = await signIn(email, PASSWORD);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/settings/api-keys");
    const session = cookiesOf(res).find((c) => c.startsWith("ascribe_session="));
    assert.ok(session);
    assert.match(session, /; HttpOnly/);
    assert.match(session, /; SameSite=Lax/);
    assert.doesNotMatch(session, /; Secure/);
    const second = await signIn(email, PASSWORD);
    assert.notEqual(cookieValue(second, "ascribe_session"), cookieValue(res, "ascribe_session"));
    const page = await env.app.inject({
      method: "GET",
      url: "/settings/api-keys",
      headers: { cookie: `ascribe_session=${cookieValue(res, "ascribe_session")}` },
    });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(email.replace(/[.]/g, "\\.")));
  });

  test("a wrong password answers 401 with a message, and sets no session", async () => {
    const { email } = await memberWithPassword();
    const res = await signIn(email, "not the password");
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Wrong email or password/);
    assert.equal(cookieValue(res, "ascribe_session"), null);
    const unknown = await signIn("nobody@example.com", "whatever password");
    assert.equal(unknown.statusCode, 401);
  });

  test("after 5 wrong passwords for an email, even the right one waits (429 with Retry-After)", async () => {
    const { email } = await memberWithPassword();
    for (let i = 0; i < 5; i++) assert.equal((await signIn(email, `wrong ${i}`)).statusCode, 401);
    const blocked = await signIn(email, PASSWORD);
    assert.equal(blocked.statusCode, 429);
    assert.match(blocked.body, /Too many failed sign-ins/);
    assert.ok(Number(blocked.headers["retry-after"]) > 0);
    assert.equal(cookieValue(blocked, "ascribe_session"), null);
  });

  /** A sign-in posted from `remoteAddress`, so these counts are their own. */
  async function signInFrom(remoteAddress: string, email: string, password: string) {
    const form = await openForm("/sign-in");
    return env.app.inject({
      method: "POST",
      url: "/sign-in",
      remoteAddress,
      headers: { cookie: form.cookie, "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ _csrf: form.csrf, email, password, next: "/" }).toString(),
    });
  }

  test("concurrent wrong passwords for an email: exactly 5 are checked (401), the others wait (429)", async () => {
    const { email } = await memberWithPassword();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signInFrom("10.9.0.1", email, `wrong ${i}`)),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    // The refused attempts were not counted as failures: still exactly five, so the right one waits.
    assert.equal((await signInFrom("10.9.0.2", email, PASSWORD)).statusCode, 429);
  });

  test("sign-ins that succeed are not counted: 22 in a row for one email from one address all pass", async () => {
    const { email } = await memberWithPassword();
    for (let i = 0; i < 22; i++) {
      assert.equal((await signInFrom("10.9.1.1", email, PASSWORD)).statusCode, 303, `sign-in ${i + 1}`);
    }
  });

  test("a sign-in form posted without its token, or from another site, changes nothing (403)", async () => {
    const { email } = await memberWithPassword();
    const form = await openForm("/sign-in");
    const noToken = await postForm("/sign-in", form.cookie, { email, password: PASSWORD });
    assert.equal(noToken.statusCode, 403);
    const crossSite = await postForm(
      "/sign-in",
      form.cookie,
      { _csrf: form.csrf, email, password: PASSWORD },
      { "sec-fetch-site": "cross-site" },
    );
    assert.equal(crossSite.statusCode, 403);
    assert.equal(cookieValue(crossSite, "ascribe_session"), null);
  });

  test("a session ends after 7 idle days, and 30 days after sign-in however used", async () => {
    const { email } = await memberWithPassword();
    const start = now;
    try {
      const cookie = `ascribe_session=${cookieValue(await signIn(email, PASSWORD), "ascribe_session")}`;
      const open = (path = "/settings/account") =>
        env.app.inject({ method: "GET", url: path, headers: { cookie } }).then((r) => r.statusCode);
      now = new Date(start.getTime() + 6 * 86_400_000);
      assert.equal(await open(), 200);
      // Used every 6 days, it still ends on day 30.
      for (const day of [12, 18, 24, 29]) {
        now = new Date(start.getTime() + day * 86_400_000);
        assert.equal(await open(), 200, `day ${day}`);
      }
      now = new Date(start.getTime() + 30 * 86_400_000 + 60_000);
      assert.equal(await open(), 303);

      const idle = `ascribe_session=${cookieValue(await signIn(email, PASSWORD), "ascribe_session")}`;
      const signedInAt = now;
      now = new Date(signedInAt.getTime() + 7 * 86_400_000 + 60_000);
      const res = await env.app.inject({
        method: "GET",
        url: "/settings/account",
        headers: { cookie: idle },
      });
      assert.equal(res.statusCode, 303);
    } finally {
      now = start;
    }
  });

  test("sign-out ends this session; sign-out everywhere ends all of them", async () => {
    const { email } = await memberWithPassword();
    const one = `ascribe_session=${cookieValue(await signIn(email, PASSWORD), "ascribe_session")}`;
    const two = `ascribe_session=${cookieValue(await signIn(email, PASSWORD), "ascribe_session")}`;
    const three = `ascribe_session=${cookieValue(await signIn(email, PASSWORD), "ascribe_session")}`;
    const csrfOf = async (cookie: string) => {
      const page = await env.app.inject({ method: "GET", url: "/settings/account", headers: { cookie } });
      return /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
    };
    const status = (cookie: string) =>
      env.app
        .inject({ method: "GET", url: "/settings/account", headers: { cookie } })
        .then((r) => r.statusCode);
    const out = await postForm("/sign-out", one, { _csrf: await csrfOf(one) });
    assert.equal(out.statusCode, 303);
    assert.equal(await status(one), 303);
    assert.equal(await status(two), 200);
    await postForm("/sign-out", two, { _csrf: await csrfOf(two), everywhere: "1" });
    assert.equal(await status(two), 303);
    assert.equal(await status(three), 303);
  });

  test("a bad new password is refused with the reason, and the link still works", async () => {
    const account = await seedAccount(env.db);
    const invited = await inviteMember(
      { db: env.db, mailer: printOnlyMailer, siteUrl: () => TEST_SITE_URL },
      { account: account.accountId, email: "new.person@example.com", role: "member" },
      now,
    );
    const path = new URL(invited.invite_url).pathname;
    const form = await openForm(path);
    const short = await postForm(path, form.cookie, {
      _csrf: form.csrf,
      password: "short",
      confirm: "short",
    });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /at least 10 characters/);
    const differ = await postForm(path, form.cookie, {
      _csrf: form.csrf,
      password: PASSWORD,
      confirm: `${PASSWORD}!`,
    });
    assert.match(differ.body, /the two passwords differ/);
    assert.equal((await env.app.inject({ method: "GET", url: path })).statusCode, 200);
  });
});

describe("on an https site", () => {
  test("the session cookie is __Host-, Secure, HttpOnly and SameSite=Lax", async () => {
    const app = await buildApp({
      db: env.db,
      secrets: testSecrets,
      keys: keyStoreFor(env.db),
      counters: createMemoryCounterStore(),
      audit: createAuditWriter(env.db, silentLogger),
      logger: silentLogger,
      routes,
      files: createTestFiles(),
      siteUrl: () => "https://ascribe.example.com",
      clock: () => now,
    });
    try {
      const { email } = await memberWithPassword();
      const page = await app.inject({ method: "GET", url: "/sign-in" });
      const formCookie = cookiesOf(page).find((c) => c.startsWith("__Host-ascribe_form="));
      assert.ok(formCookie);
      assert.match(formCookie, /; Secure/);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
      const res = await app.inject({
        method: "POST",
        url: "/sign-in",
        headers: {
          cookie: formCookie.split(";")[0] ?? "",
          "content-type": "application/x-www-form-urlencoded",
        },
        payload: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
      });
      assert.equal(res.statusCode, 303);
      const session = cookiesOf(res).find((c) => c.startsWith("__Host-ascribe_session="));
      assert.ok(session);
      for (const flag of ["; Path=/", "; HttpOnly", "; Secure", "; SameSite=Lax"])
        assert.ok(session.includes(flag), flag);
      assert.doesNotMatch(session, /; Domain=/);
    } finally {
      await app.close();
    }
  });
});
