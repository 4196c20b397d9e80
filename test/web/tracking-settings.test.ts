import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addDomain } from "../../src/admin/domains.ts";
import { inviteMember } from "../../src/admin/members.ts";
import { printOnlyMailer } from "../../src/people/mailer.ts";
import { trackingSetup } from "../../src/queries/tracking-setup.ts";
import { seedAccount, TEST_SITE_URL, useTestApp } from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";
import { signedIn } from "../helpers/web.ts";

const env = useTestApp();

/** Text as the page renders it, entities decoded (the tag is shown as text, not run). */
function decoded(html: string): string {
  return html
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

function elementText(html: string, id: string): string | null {
  const found = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return found?.[1] === undefined ? null : decoded(found[1]);
}

async function hostsOf(accountId: string): Promise<string[]> {
  const setup = await env.db.tenant(accountId, (tx) => trackingSetup(tx, accountId));
  return setup?.hosts ?? [];
}

async function withMember(accountId: string, email: string) {
  await inviteMember(
    { db: env.db, mailer: printOnlyMailer, siteUrl: () => TEST_SITE_URL },
    { account: accountId, email, role: "member" },
  );
  return signedIn(env.app, env.db, email);
}

describe("Settings → tracking", () => {
  test("signed out: sent to the sign-in page", async () => {
    const r = await env.app.inject({ method: "GET", url: "/settings/tracking" });
    assert.equal(r.statusCode, 303);
    assert.match(String(r.headers.location), /^\/sign-in\b/);
    const post = await env.app.inject({
      method: "POST",
      url: "/settings/tracking/hosts",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "host=track.signed-out.example.com",
    });
    // A post without the session's token is refused before anything else (postedBy).
    assert.equal(post.statusCode, 403);
  });

  test("the tag to paste carries the account's client key, as docs/tracking.md writes it", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    const page = await owner.get("/settings/tracking");
    assert.equal(page.statusCode, 200);
    assert.equal(
      elementText(page.body, "tracking-tag"),
      `<script src="${TEST_SITE_URL}/api/track.js" data-client="${account.clientKey}"></script>`,
    );
    assert.match(
      page.body,
      /<button type="button" class="secondary" data-copy="tracking-tag">Copy<\/button>/,
    );
    // The hidden fields of SPEC, client_key with this account's value.
    for (const field of ["utm_source", "utm_term", "utm_campaign_id", "utm_adset_id", "client_key"])
      assert.ok(page.body.includes(`<code>${field}</code>`), field);
    assert.ok(page.body.includes(`set to <code>${account.clientKey}</code>`));
    // CSP: no inline script or style.
    assert.doesNotMatch(page.body, /<script>|<script(?![^>]*\bsrc=)[^>]*>|\sstyle=/);
    assert.equal(elementText(page.body, "cname-target"), "localhost");
  });

  test("an owner adds a host: listed with its CNAME record and the certificate endpoint's answer", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    const before = await owner.get("/settings/tracking");
    assert.match(before.body, /action="\/settings\/tracking\/hosts"/);
    assert.match(before.body, /No host yet/);

    const added = await owner.post("/settings/tracking/hosts", { host: " Track.Owner-Adds.example.com " });
    assert.equal(added.statusCode, 303, added.body);
    assert.equal(added.headers.location, "/settings/tracking");
    assert.deepEqual(await hostsOf(account.accountId), ["track.owner-adds.example.com"]);

    const cookie = [added.headers["set-cookie"]].flat().find((c) => String(c).startsWith("ascribe_flash="));
    const flashValue = String(cookie).split(";")[0];
    const after = await env.app.inject({
      method: "GET",
      url: "/settings/tracking",
      headers: { cookie: `${owner.cookie}; ${flashValue}` },
    });
    assert.equal(after.statusCode, 200);
    assert.match(after.body, /track\.owner-adds\.example\.com is added/);
    assert.ok(after.body.includes("<code>track.owner-adds.example.com. CNAME localhost.</code>"));
    assert.match(after.body, /accepted: the certificate endpoint lets the proxy request one/);
    // What the page says is what the endpoint answers.
    const ask = await env.app.inject({
      method: "GET",
      url: "/api/tls/ask?domain=track.owner-adds.example.com",
    });
    assert.equal(ask.statusCode, 200);
  });

  test("a member sees no form, and a forged POST is refused with 403 and adds nothing", async () => {
    const account = await seedAccount(env.db);
    const member = await withMember(account.accountId, `member.${account.accountId.slice(0, 8)}@example.com`);
    const page = await member.get("/settings/tracking");
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /action="\/settings\/tracking\/hosts"/);
    assert.match(page.body, /Only the account's owners and administrators add tracking hosts/);
    // Everyone in the account sees the tag.
    assert.ok(elementText(page.body, "tracking-tag")?.includes(account.clientKey));

    const forged = await member.post("/settings/tracking/hosts", { host: "track.forged.example.com" });
    assert.equal(forged.statusCode, 403);
    assert.match(forged.body, /Only the account&#39;s owners and administrators can do this|Not allowed/);
    assert.deepEqual(await hostsOf(account.accountId), []);

    // Without the session's CSRF token, even an owner is refused.
    const owner = await signedIn(env.app, env.db, account.owner);
    const noToken = await env.app.inject({
      method: "POST",
      url: "/settings/tracking/hosts",
      headers: { cookie: owner.cookie, "content-type": "application/x-www-form-urlencoded" },
      payload: "host=track.no-token.example.com",
    });
    assert.equal(noToken.statusCode, 403);
    assert.deepEqual(await hostsOf(account.accountId), []);
  });

  test("a bad host is refused with 400 naming the problem; another account's host with 403", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    const bad = await owner.post("/settings/tracking/hosts", { host: "not a host" });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /class="notice error"[^>]*>host: must be a host name such as track\.example\.com/);
    // The typed value stays in the field.
    assert.match(bad.body, /id="tracking-host"[^>]*value="not a host"/);
    assert.deepEqual(await hostsOf(account.accountId), []);

    const other = await seedAccount(env.db);
    await addDomain(env.db, { account: other.accountId, host: "track.taken.example.com" });
    const taken = await owner.post("/settings/tracking/hosts", { host: "track.taken.example.com" });
    assert.equal(taken.statusCode, 403);
    assert.match(taken.body, /track\.taken\.example\.com is registered by another account/);
    assert.deepEqual(await hostsOf(account.accountId), []);
  });

  test("the grader grades a pasted ad URL as the test-utm endpoint does", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    // docs/tracking.md's example: a macro left in utm_campaign, the ad id's name in the wrong case.
    const adUrl =
      "https://acme.example.com/lp?utm_source=facebook&utm_medium=paid&utm_campaign=%7B%7Bcampaign.name%7D%7D&utm_content=Video%203&utm_term=Lookalike&UTM_Ad_Id=120210000000003";
    const page = await owner.get(`/settings/tracking?url=${encodeURIComponent(adUrl)}`);
    assert.equal(page.statusCode, 200);
    assert.equal(elementText(page.body, "utm-grade-value"), "B");
    const text = decoded(page.body.replace(/<[^>]+>/g, ""));
    const listed = (term: string) =>
      new RegExp(`<dt>${term}</dt><dd>(.*?)</dd>`).exec(page.body)?.[1]?.replace(/<[^>]+>/g, "");
    assert.equal(listed("Found"), "utm_source, utm_medium, utm_content, utm_term");
    assert.equal(listed("Missing"), "utm_campaign, utm_campaign_id, utm_ad_id, utm_adset_id");
    assert.ok(text.includes("Unresolved macro in utm_campaign"));
    assert.ok(text.includes('Parameter "UTM_Ad_Id" is not recognized: rename it "utm_ad_id"'));
    // The field keeps the pasted address.
    assert.ok(decoded(page.body).includes(`value="${adUrl}"`));

    const api = await env.app.inject({
      method: "GET",
      url: `/api/webhook/test-utm?client_key=${account.clientKey}&url=${encodeURIComponent(adUrl)}`,
    });
    assert.equal(api.statusCode, 200);
    const verdict = api.json();
    assert.equal(verdict.grade, "B");
    assert.deepEqual(verdict.found, ["utm_source", "utm_medium", "utm_content", "utm_term"]);
    for (const warning of verdict.warnings as string[]) assert.ok(text.includes(warning), warning);

    const invalid = await owner.get("/settings/tracking?url=not-a-url");
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /Not graded: url: is not an absolute URL/);
    assert.equal(elementText(invalid.body, "utm-grade-value"), null);
  });

  test("capture health shows the verdict of GET /api/v1/attribution/health", async () => {
    const account = await seedAccount(env.db);
    const owner = await signedIn(env.app, env.db, account.owner);
    const key = await account.key(["read:attribution"]);
    const health = async () =>
      (
        await env.app.inject({
          method: "GET",
          url: "/api/v1/attribution/health",
          headers: { authorization: `Bearer ${key}` },
        })
      ).json().data;

    const empty = await owner.get("/settings/tracking");
    assert.equal((await health()).verdict, "no_data");
    assert.equal(elementText(empty.body, "capture-verdict"), "no_data");

    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await loadFixture(env.db, account.accountId, {
      spend: [
        {
          platform: "meta",
          ad_id: "X",
          ad_name: "Ad X",
          campaign_id: "C1",
          campaign_name: "Spring",
          adset_id: "S1",
          adset_name: "Set",
          date: yesterday,
          total_spend: 10,
        },
      ],
      touchpoints: [
        {
          id: "w1",
          visitor_id: "v1",
          session_id: "s1",
          kind: "web",
          event_type: "page_view",
          occurred_at: at(yesterday),
          utm_source: "facebook",
          utm_ad_id: "X",
        },
      ],
      events: [
        {
          id: "e1",
          event_type: "lead",
          event_datetime: at(yesterday),
          contact_email: "a@x.test",
          utm_ad_id: "X",
        },
        {
          id: "e2",
          event_type: "lead",
          event_datetime: at(yesterday),
          contact_email: "b@x.test",
          utm_content: "{{ad.name}}",
        },
      ],
    });
    const api = await health();
    assert.equal(api.verdict, "broken"); // one of the two ad-signal events unresolved: 50 %
    const page = await owner.get("/settings/tracking");
    assert.equal(page.statusCode, 200);
    assert.equal(elementText(page.body, "capture-verdict"), api.verdict);
    for (const issue of api.issues as { code: string }[])
      assert.ok(page.body.includes(`<code>${issue.code}</code>`));
  });
});
