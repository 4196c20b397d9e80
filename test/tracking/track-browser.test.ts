import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { type Database, rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { createTestApp, openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * track.js in real Chromium (Debian's, installed by .ci/run; TRACKING.md §6): fixture pages on https
 * origins served by route interception, the script and its beacons forwarded to the real server,
 * effects checked in the browser's cookies and DOM and through the database.
 */
const CHROMIUM = "/usr/bin/chromium";
const SERVICE = "https://ascribe.test";
const skip = !existsSync(CHROMIUM) && process.env.CI !== "true" ? "chromium is not installed" : false;

let db: Database;
let app: Awaited<ReturnType<typeof createTestApp>>;
let serverUrl: string;
let browser: Browser;
before(async () => {
  if (skip) return;
  db = await openTestDatabase();
  app = await createTestApp(db, { counters: createMemoryCounterStore() });
  await app.listen({ port: 0, host: "127.0.0.1" });
  serverUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
});
after(async () => {
  if (skip) return;
  await browser.close();
  await app.close();
  await app.audit.close();
  await db.close();
});

/** A browser context whose https pages come from `pages` (by URL without query) and whose
 * requests to the service reach the real server. */
async function contextWith(pages: Record<string, string>): Promise<BrowserContext> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if (url.origin === SERVICE) {
      const response = await route.fetch({ url: `${serverUrl}${url.pathname}${url.search}` });
      return route.fulfill({ response });
    }
    const page = pages[`${url.origin}${url.pathname}`];
    if (page === undefined) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ status: 200, contentType: "text/html", body: page });
  });
  return context;
}

const landing = (clientKey: string, body = "") =>
  `<!doctype html><html><head><script src="${SERVICE}/api/track.js" data-client="${clientKey}"></script></head><body>${body}</body></html>`;

async function touches(accountId: string, expected: number) {
  // A beacon is answered after its commit; the page does not wait for the answer.
  for (let i = 0; i < 50; i++) {
    const found = await db.admin(accountId, (tx) =>
      rows<{
        event_type: string;
        utm: Record<string, string>;
        ad_ids: Record<string, string>;
        click_ids: Record<string, string>;
      }>(
        tx,
        sql`select event_type, utm, ad_ids, click_ids from touchpoints
            where account_id = ${accountId} order by occurred_at, created_at`,
      ),
    );
    if (found.length >= expected) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`fewer than ${expected} touchpoints`);
}

const AD_URL =
  "https://www.shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=Video%203" +
  "&utm_term=Lookalike&utm_campaign_id=120210000000001&utm_adset_id=120210000000002&utm_ad_id=120210000000003&fbclid=IwAR0AbCdE";

describe("track.js in Chromium", { skip }, () => {
  test("an ad landing on a co.uk shop: cookies on the registrable domain, one page view with the ad in the API", async () => {
    const account = await seedAccount(db);
    const context = await contextWith({ "https://www.shop.example.co.uk/offer": landing(account.clientKey) });
    const page = await context.newPage();
    await page.goto(AD_URL);

    const [touch] = await touches(account.accountId, 1);
    assert.equal(touch?.event_type, "page_view");
    assert.deepEqual(
      [touch?.utm.source, touch?.utm.medium, touch?.utm.campaign, touch?.utm.content, touch?.utm.term],
      ["facebook", "paid", "Spring", "Video 3", "Lookalike"],
    );
    assert.deepEqual(touch?.ad_ids, {
      ad_id: "120210000000003",
      adset_id: "120210000000002",
      campaign_id: "120210000000001",
    });
    assert.equal(touch?.click_ids.fbclid, "IwAR0AbCdE");

    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c]));
    for (const name of ["utm_source", "utm_campaign", "first_utm_source", "_ascribe"])
      assert.equal(cookies[name]?.domain, ".example.co.uk", name);
    assert.equal(cookies.utm_source?.value, "facebook");
    assert.equal(cookies.first_utm_source?.value, "facebook");
    assert.equal(cookies.utm_source?.secure, true);
    await context.close();
  });

  test("an email click after the ad click: source and medium follow, the campaign stays, the first touch is kept", async () => {
    const account = await seedAccount(db);
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer": landing(account.clientKey),
      "https://blog.example.co.uk/news": landing(account.clientKey),
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await touches(account.accountId, 1);
    // Another subdomain of the same site reads the same cookies.
    await page.goto(
      "https://blog.example.co.uk/news?utm_source=newsletter&utm_medium=email&utm_campaign=November",
    );
    await touches(account.accountId, 2);

    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c.value]));
    assert.equal(cookies.utm_source, "newsletter");
    assert.equal(cookies.utm_medium, "email");
    assert.equal(cookies.utm_campaign, "Spring");
    assert.equal(cookies.utm_content, "Video%203");
    assert.equal(cookies.first_utm_source, "facebook");
    await context.close();
  });

  test("hidden fields by exact lowercase name, in forms present at load and added later", async () => {
    const account = await seedAccount(db);
    const form = (id: string) =>
      `<form id="${id}"><input type="hidden" name="utm_source"><input type="hidden" name="utm_campaign">` +
      `<input type="hidden" name="utm_ad_id"><input type="hidden" name="UTM_Source" value="untouched"></form>`;
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer": landing(
        account.clientKey,
        `${form("early")}<script>setTimeout(() => document.body.insertAdjacentHTML("beforeend", ${JSON.stringify(form("late"))}), 300)</script>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await page.waitForSelector("#late", { state: "attached" });
    for (const id of ["early", "late"]) {
      await page.waitForFunction(
        (formId) => (document.querySelector(`#${formId} [name=utm_source]`) as HTMLInputElement).value !== "",
        id,
      );
      const values = await page.$$eval(`#${id} input`, (inputs) =>
        inputs.map((i) => [i.getAttribute("name"), (i as HTMLInputElement).value]),
      );
      assert.deepEqual(values, [
        ["utm_source", "facebook"],
        ["utm_campaign", "Spring"],
        ["utm_ad_id", "120210000000003"],
        ["UTM_Source", "untouched"],
      ]);
    }
    await context.close();
  });

  test("a booking message from Calendly's iframe is one booking; the same message from another origin is ignored", async () => {
    const account = await seedAccount(db);
    const booked = JSON.stringify({
      event: "calendly.event_scheduled",
      payload: {
        event: { uri: "https://api.calendly.com/scheduled_events/E1" },
        invitee: { uri: "https://api.calendly.com/invitees/I1" },
      },
    });
    const poster = `<script>parent.postMessage(${booked}, "*")</script>`;
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer": landing(
        account.clientKey,
        `<iframe id="hostile" src="https://calendly.evil.example/a"></iframe>`,
      ),
      "https://calendly.evil.example/a": poster,
      "https://www.shop.example.co.uk/book": landing(
        account.clientKey,
        `<iframe id="calendly" src="https://calendly.com/acme/intro?embed_domain=www.shop.example.co.uk"></iframe>`,
      ),
      "https://calendly.com/acme/intro": poster,
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await page.waitForTimeout(500);
    await page.goto("https://www.shop.example.co.uk/book");

    const found = await touches(account.accountId, 3);
    await page.waitForTimeout(500);
    const all = await touches(account.accountId, 3);
    assert.deepEqual(
      all.map((t) => t.event_type),
      ["page_view", "page_view", "booking"],
    );
    assert.equal(found.at(-1)?.utm.campaign, "Spring");
    await context.close();
  });

  test("a visitor who declined (Global Privacy Control) sends nothing and gets no cookie", async () => {
    const account = await seedAccount(db);
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer":
        `<!doctype html><html><head><script>Object.defineProperty(navigator, "globalPrivacyControl", { value: true })</script></head></html>`.replace(
          "</head>",
          `<script src="${SERVICE}/api/track.js" data-client="${account.clientKey}"></script></head>`,
        ),
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await page.waitForTimeout(1500);
    assert.deepEqual(await context.cookies(), []);
    const stored = await db.admin(account.accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from touchpoints where account_id = ${account.accountId}`,
      ),
    );
    assert.equal(stored[0]?.n, 0);
    await context.close();
  });
});
