import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { addDomain } from "../../src/admin/domains.ts";
import {
  AD_QUERY,
  landing,
  browserSkip as skip,
  storedTouches,
  touches,
  useBrowser,
} from "../helpers/browser.ts";
import { seedAccount } from "../helpers/harness.ts";

/*
 * Consent (SPEC "Tracking script behavior" 10; TRACKING.md decisions and §4), cookies on a private
 * suffix and their lifetimes (§3; behaviours 2, 3 and 9), and the first-party tracking host, in
 * Chromium against the real server.
 */
const browser = useBrowser();
const SHOP = "https://www.shop.example.co.uk";
const DAY_S = 86_400;

/** Nothing stored and no cookie but the CMP's own, a second and a half after the page loaded. */
async function assertNothing(page: Page, accountId: string, cmpCookie?: string) {
  await page.waitForTimeout(1500);
  assert.deepEqual(await storedTouches(browser.db, accountId), []);
  const names = (await page.context().cookies()).map((c) => c.name).filter((n) => n !== cmpCookie);
  assert.deepEqual(names, []);
}

describe("track.js consent in Chromium", { skip }, () => {
  test("opt-in with Cookiebot: nothing before a choice, nothing after a decline, the landing's ad after a grant", async () => {
    const account = await seedAccount(browser.db);
    const consent = (statistics: boolean) =>
      `CookieConsent={stamp:%27x1%27%2Cnecessary:true%2Cpreferences:false%2Cstatistics:${statistics}%2Cmarketing:false%2Cmethod:%27explicit%27%2Cver:1};path=/`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey).replace(
        "data-client",
        'data-consent="required" data-client',
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await assertNothing(page, account.accountId);
    await page.evaluate((c) => {
      // biome-ignore lint/suspicious/noDocumentCookie: the CMP's own cookie, as Cookiebot writes it.
      document.cookie = c;
    }, consent(false));
    await assertNothing(page, account.accountId, "CookieConsent");
    await page.evaluate((c) => {
      // biome-ignore lint/suspicious/noDocumentCookie: the CMP's own cookie, as Cookiebot writes it.
      document.cookie = c;
    }, consent(true));
    const [view] = await touches(browser.db, account.accountId, 1);
    // Held in memory while waiting: the ad of the landing URL, though the URL is unchanged.
    assert.equal(view?.utm.campaign, "Spring");
    assert.equal(view?.click_ids.fbclid, "IwAR0AbCdE");
    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c.value]));
    assert.equal(cookies.utm_source, "facebook");
    await context.close();
  });

  test("Google Consent Mode: a default of denied stops everything until an update grants analytics storage", async () => {
    const account = await seedAccount(browser.db);
    const gtag =
      `<script>window.dataLayer = []; function gtag() { dataLayer.push(arguments) }` +
      ` gtag("consent", "default", { analytics_storage: "denied", ad_storage: "denied" })</script>`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey, "", gtag),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await assertNothing(page, account.accountId);
    await page.evaluate(() => {
      (window as unknown as { gtag: (...a: unknown[]) => void }).gtag("consent", "update", {
        analytics_storage: "granted",
      });
    });
    const [view] = await touches(browser.db, account.accountId, 1);
    assert.equal(view?.utm.source, "facebook");
    await context.close();
  });

  test("TCF: nothing until the CMP answers; a refusal of purpose 7 stops it; consent to 1 and 7 starts it", async () => {
    const account = await seedAccount(browser.db);
    // The stub every TCF CMP installs first: it keeps the listeners and answers later.
    const tcf =
      `<script>window.listeners = []; window.__tcfapi = (command, version, callback) => {` +
      ` if (command === "addEventListener") listeners.push(callback) };` +
      ` window.answer = (consents) => listeners.forEach((l) => l({ eventStatus: "useractioncomplete", gdprApplies: true, purpose: { consents } }, true))</script>`;
    const context = await browser.contextWith({ [`${SHOP}/offer`]: landing(account.clientKey, "", tcf) });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await assertNothing(page, account.accountId);
    await page.evaluate(() =>
      (window as unknown as { answer: (c: object) => void }).answer({ 1: true, 7: false }),
    );
    await assertNothing(page, account.accountId);
    await page.evaluate(() =>
      (window as unknown as { answer: (c: object) => void }).answer({ 1: true, 7: true }),
    );
    const [view] = await touches(browser.db, account.accountId, 1);
    assert.equal(view?.ad_ids.adset_id, "120210000000002");
    await context.close();
  });

  test("OneTrust with the performance group refused: nothing, and a booking message is not sent either", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<iframe src="https://calendly.com/acme/intro"></iframe>`,
        `<script>document.cookie = "OptanonConsent=isGpcEnabled=0&groups=C0001%3A1%2CC0002%3A0%2CC0004%3A0;path=/"</script>`,
      ),
      "https://calendly.com/acme/intro": `<script>parent.postMessage({ event: "calendly.event_scheduled", payload: {} }, "*")</script>`,
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await assertNothing(page, account.accountId, "OptanonConsent");
    await context.close();
  });
});

describe("track.js cookies in Chromium", { skip }, () => {
  test("on a private suffix (github.io) the cookies stay on the site's own domain and the visit counts", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      "https://acme.github.io/launch": landing(account.clientKey),
    });
    const page = await context.newPage();
    await page.goto(`https://acme.github.io/launch${AD_QUERY}`);
    const [view] = await touches(browser.db, account.accountId, 1);
    assert.equal(view?.utm.term, "Lookalike");
    const cookies = await context.cookies();
    assert.ok(cookies.length >= 11, `cookies: ${cookies.map((c) => c.name)}`);
    // github.io is refused as a public suffix: acme.github.io is the registrable domain.
    for (const c of cookies) assert.equal(c.domain, ".acme.github.io", c.name);
    await context.close();
  });

  test("lifetimes: the state and standard cookies 30 days, the first touch a year; a later visit leaves the first touch", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey),
      [`${SHOP}/news`]: landing(account.clientKey),
    });
    const page = await context.newPage();
    // A first visit without parameters, from a search engine.
    await page.goto(`${SHOP}/news`, { referer: "https://www.google.com/" });
    await touches(browser.db, account.accountId, 1);
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 2);
    const now = Date.now() / 1000;
    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c]));
    const days = (name: string) => Math.round(((cookies[name]?.expires ?? 0) - now) / DAY_S);
    assert.deepEqual(
      ["_ascribe", "utm_source", "utm_term", "first_utm_source", "first_utm_medium"].map(days),
      [30, 30, 30, 365, 365],
    );
    assert.deepEqual(
      [cookies.first_utm_source?.value, cookies.first_utm_medium?.value, cookies.utm_source?.value],
      ["www.google.com", "referral", "facebook"],
    );
    // No campaign on the first touch: its cookie is not written.
    assert.equal(cookies.first_utm_campaign, undefined);
    await context.close();
  });
});

describe("track.js from a first-party tracking host in Chromium", { skip }, () => {
  test("without data-client, the registered host names the account; beacons go to that host", async () => {
    const account = await seedAccount(browser.db);
    await addDomain(browser.db, { account: account.accountId, host: "track.example.co.uk" });
    const context = await browser.contextWith(
      {
        "https://www.example.co.uk/offer": `<!doctype html><html><head><script src="https://track.example.co.uk/api/track.js"></script></head><body></body></html>`,
      },
      ["track.example.co.uk"],
    );
    const beacons: string[] = [];
    context.on("request", (r) => {
      if (r.url().endsWith("/api/collect")) beacons.push(r.url());
    });
    const page = await context.newPage();
    await page.goto(`https://www.example.co.uk/offer${AD_QUERY}`);
    const [view] = await touches(browser.db, account.accountId, 1);
    assert.equal(view?.utm.campaign, "Spring");
    assert.deepEqual(beacons, ["https://track.example.co.uk/api/collect"]);
    assert.equal((await context.cookies()).find((c) => c.name === "_ascribe")?.domain, ".example.co.uk");
    await context.close();
  });

  test("an unregistered host's beacons are refused: nothing is stored anywhere", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith(
      {
        "https://www.other.example.com/offer": `<!doctype html><html><head><script src="https://track.other.example.com/api/track.js"></script></head></html>`,
      },
      ["track.other.example.com"],
    );
    const statuses: number[] = [];
    context.on("response", (r) => {
      if (r.url().endsWith("/api/collect")) statuses.push(r.status());
    });
    const page = await context.newPage();
    await page.goto(`https://www.other.example.com/offer${AD_QUERY}`);
    await page.waitForTimeout(1500);
    assert.deepEqual(statuses, [400]);
    assert.deepEqual(await storedTouches(browser.db, account.accountId), []);
    await context.close();
  });
});
