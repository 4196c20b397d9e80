import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { addConnector } from "../../src/admin/connectors.ts";
import { inviteMember } from "../../src/admin/members.ts";
import { rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { printOnlyMailer } from "../../src/people/mailer.ts";
import { browserSkip, CHROMIUM } from "../helpers/browser.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  type SeededAccount,
  seedAccount,
  TEST_SITE_URL,
  type TestApp,
  testSecrets,
} from "../helpers/harness.ts";
import { at, loadFixture } from "../helpers/report-fixtures.ts";

/*
 * The application in real Chromium against the real server: a new owner follows the one-time link,
 * signs in, creates a read-only key, uses it on the API, compares the overview with the API, and
 * revokes it; a cross-site form is refused; axe-core checks every page.
 */
const PASSWORD = "correct horse battery staple";
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

let db: Awaited<ReturnType<typeof openTestDatabase>>;
let app: TestApp;
let site: string;
let browser: Browser;
let account: SeededAccount;
let inviteUrl: string;

before(async () => {
  if (browserSkip) return;
  db = await openTestDatabase();
  app = await createTestApp(db, { counters: createMemoryCounterStore() });
  await app.listen({ port: 0, host: "127.0.0.1" });
  site = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  account = await seedAccount(db, { name: "Browser Co", timezone: "Europe/Paris" });
  await loadFixture(db, account.accountId, {
    spend: [{ platform: "meta", ad_id: "A1", ad_name: "Ad One", date: "2026-11-10", total_spend: 100 }],
    events: [
      {
        id: "l1",
        event_type: "lead",
        event_datetime: at("2026-11-03"),
        contact_email: "ann@x.test",
        utm_ad_id: "A1",
      },
      { id: "l2", event_type: "lead", event_datetime: at("2026-11-04"), contact_email: "bob@x.test" },
      { id: "l3", event_type: "lead", event_datetime: at("2026-11-05"), contact_email: "cat@x.test" },
      {
        id: "s1",
        event_type: "sale",
        event_datetime: at("2026-11-12"),
        contact_email: "ann@x.test",
        amount: 1000,
      },
    ],
  });
  inviteUrl = (
    await inviteMember(
      { db, mailer: printOnlyMailer, siteUrl: () => site },
      { account: account.accountId, email: account.owner, role: "owner" },
    )
  ).invite_url;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
});

after(async () => {
  if (browserSkip) return;
  await browser.close();
  await app.close();
  await app.audit.close();
  await db.close();
});

async function keyCount(): Promise<number> {
  const found = await db.admin(account.accountId, (tx) =>
    rows<{ n: number }>(
      tx,
      sql`select count(*)::int as n from api_keys where account_id = ${account.accountId}`,
    ),
  );
  return found[0]?.n ?? 0;
}

async function signInWith(page: Page, email: string, password: string) {
  await page.goto(`${site}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  // The form's answer, not only the page already loaded: `waitForLoadState` alone can return before
  // the POST's navigation starts, and the next `goto` would then cut an attempt short.
  const answered = page.waitForResponse(
    (r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/sign-in",
  );
  await page.getByRole("button", { name: "Sign in" }).click();
  await answered;
  await page.waitForLoadState();
}

/** axe-core's serious and critical findings on the page as it is. */
async function axeFindings(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return result
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

describe("the application in Chromium", { skip: browserSkip }, () => {
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    context = await browser.newContext();
    page = await context.newPage();
  });
  after(async () => context?.close());

  test("the one-time link lets the owner choose a password and signs them in", async () => {
    await page.goto(inviteUrl);
    await page.getByLabel("New password").fill(PASSWORD);
    await page.getByLabel("Repeat it").fill(PASSWORD);
    await page.getByRole("button", { name: "Save and sign in" }).click();
    await page.waitForURL(`${site}/`);
    assert.equal(await page.locator("h1").textContent(), "Overview");
    const [session] = (await context.cookies()).filter((c) => c.name === "ascribe_session");
    assert.ok(session);
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Lax");
  });

  test("the overview's KPIs equal GET /dashboard/kpis for the same window", async () => {
    const key = await account.key(["read:dashboard"]);
    const api = await app.inject({
      method: "GET",
      url: "/api/v1/dashboard/kpis?from=2026-11-01&to=2026-11-20",
      headers: bearer(key),
    });
    const kpis = api.json().data as Record<string, number | null>;
    await page.goto(`${site}/?from=2026-11-01&to=2026-11-20`);
    const shown = await page
      .locator("dd[data-kpi]")
      .evaluateAll((nodes) =>
        nodes.map((n): [string, string] => [
          n.getAttribute("data-kpi") ?? "",
          n.getAttribute("data-value") ?? "",
        ]),
      );
    assert.ok(shown.length >= 10);
    for (const [name, value] of shown) {
      const expected = kpis[name];
      assert.equal(value, expected === null || expected === undefined ? "" : String(expected), name);
    }
    // Worked out by hand from the fixture: 3 leads, 1 sale of 1,000, 100 spent.
    assert.deepEqual(
      Object.fromEntries(
        shown.filter(([k]) => ["leads", "total_sales", "revenue", "spend", "roas"].includes(k ?? "")),
      ),
      {
        leads: "3",
        total_sales: "1",
        revenue: "1000",
        spend: "100",
        roas: "10",
      },
    );
    assert.match(
      (await page.locator(".kpi", { hasText: "Revenue" }).first().textContent()) ?? "",
      /€1,000\.00/,
    );
    // The chart is drawn by uPlot from the page's JSON block.
    await page.locator("#daily-chart canvas").waitFor();
  });

  test("a read-only key is created, shown once with a copy button, works on the API, then is revoked → 401", async () => {
    await page.goto(`${site}/settings/api-keys`);
    await page.getByLabel("Name").fill("read-only script");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForURL(`${site}/settings/api-keys`);
    const key = (await page.locator("#new-key").textContent()) ?? "";
    assert.match(key, /^svc_sk_live_[A-Za-z0-9_-]{32}$/);
    assert.equal(await page.getByRole("button", { name: "Copy" }).count(), 1);
    const ok = await fetch(`${site}/api/v1/dashboard/kpis`, { headers: bearer(key) });
    assert.equal(ok.status, 200);
    const write = await fetch(`${site}/api/v1/goals`, {
      method: "PUT",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ goals: [] }),
    });
    assert.equal(write.status, 403);
    await page.reload();
    assert.equal(await page.locator("#new-key").count(), 0);
    assert.ok(!(await page.content()).includes(key));

    await page.getByRole("link", { name: `Revoke read-only script (${key.slice(12, 20)})` }).click();
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.waitForURL(`${site}/settings/api-keys`);
    const refused = await fetch(`${site}/api/v1/dashboard/kpis`, { headers: bearer(key) });
    assert.equal(refused.status, 401);
  });

  test("a form posted from another site is refused and creates no key", async () => {
    const before = await keyCount();
    const evil = await context.newPage();
    await evil.route("https://evil.test/", (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<form id="f" method="post" action="${site}/settings/api-keys">
          <input name="name" value="stolen"><input name="scopes" value="read:icp"><input name="full" value="1">
          <input name="expires" value="never"></form>`,
      }),
    );
    await evil.goto("https://evil.test/");
    const [response] = await Promise.all([
      evil.waitForResponse(`${site}/settings/api-keys`),
      evil.evaluate(() => (document.getElementById("f") as HTMLFormElement).submit()),
    ]);
    assert.equal(response.status(), 403);
    assert.equal(await keyCount(), before);
    await evil.close();
  });

  test("axe-core finds no serious or critical violation on any page, and no page scrolls sideways at 375 px", async () => {
    const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 800 } });
    try {
      await axeContext.addCookies((await context.cookies()).filter((c) => c.name === "ascribe_session"));
      const axePage = await axeContext.newPage();
      // A connection, so its page is checked with a row and its remove link.
      await addConnector(db, testSecrets, TEST_SITE_URL, { account: account.accountId, kind: "calendly" });
      const pages = [
        "/?from=2026-11-01&to=2026-11-20",
        "/reports/attribution?from=2026-11-01&to=2026-11-20",
        "/reports/sales?from=2026-11-01&to=2026-11-20",
        "/reports/funnel?from=2026-11-01&to=2026-11-20",
        "/contacts",
        "/contacts/journey?email=ann%40x.test",
        "/calls",
        "/settings/api-keys",
        "/settings/members",
        "/settings/tracking",
        "/settings/connections",
        "/settings/account",
      ];
      const problems: string[] = [];
      for (const path of pages) {
        const res = await axePage.goto(`${site}${path}`);
        assert.equal(res?.status(), 200, path);
        for (const finding of await axeFindings(axePage)) problems.push(`${path}: ${finding}`);
        const wide = await axePage.evaluate(() => document.documentElement.scrollWidth);
        if (wide > 375) problems.push(`${path}: ${wide} px wide at 375 px`);
      }
      const signedOut = await axeContext.newPage();
      await axeContext.clearCookies();
      for (const path of ["/sign-in", "/forgot-password"]) {
        await signedOut.goto(`${site}${path}`);
        for (const finding of await axeFindings(signedOut)) problems.push(`${path}: ${finding}`);
      }
      assert.deepEqual(problems, []);
    } finally {
      await axeContext.close();
    }
  });

  test("wrong passwords are refused, and after five the right one waits", async () => {
    const other = await browser.newContext();
    try {
      const p = await other.newPage();
      await signInWith(p, account.owner, "wrong password 1");
      assert.match((await p.getByRole("alert").textContent()) ?? "", /Wrong email or password/);
      for (let i = 2; i <= 5; i++) await signInWith(p, account.owner, `wrong password ${i}`);
      await signInWith(p, account.owner, PASSWORD);
      assert.match((await p.getByRole("alert").textContent()) ?? "", /Too many failed sign-ins/);
      assert.equal((await other.cookies()).filter((c) => c.name === "ascribe_session").length, 0);
    } finally {
      await other.close();
    }
  });
});
