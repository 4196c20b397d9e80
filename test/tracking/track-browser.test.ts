import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import {
  AD_QUERY,
  landing,
  SERVICE,
  browserSkip as skip,
  touches as stored,
  useBrowser,
} from "../helpers/browser.ts";
import { seedAccount } from "../helpers/harness.ts";

const browser = useBrowser();
const touches = (accountId: string, expected: number) => stored(browser.db, accountId, expected);
const contextWith = (pages: Record<string, string>) => browser.contextWith(pages);
const AD_URL = `https://www.shop.example.co.uk/offer${AD_QUERY}`;

describe("track.js in Chromium", { skip }, () => {
  test("an ad landing on a co.uk shop: cookies on the registrable domain, one page view with the ad in the API", async () => {
    const account = await seedAccount(browser.db);
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
    const account = await seedAccount(browser.db);
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
    const account = await seedAccount(browser.db);
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
    const account = await seedAccount(browser.db);
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
    // The booking page's view and its booking may leave in the same moment (the embed posts as soon
    // as it loads): the order they are stored in is the server's.
    assert.deepEqual(all.map((t) => t.event_type).sort(), ["booking", "page_view", "page_view"]);
    assert.equal(found.find((t) => t.event_type === "booking")?.utm.campaign, "Spring");
    await context.close();
  });

  test("a visitor who declined (Global Privacy Control) sends nothing and gets no cookie", async () => {
    const account = await seedAccount(browser.db);
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
    const stored = await browser.db.admin(account.accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from touchpoints where account_id = ${account.accountId}`,
      ),
    );
    assert.equal(stored[0]?.n, 0);
    await context.close();
  });

  test("every beacon carries its own id: 128 random bits, never the same twice", async () => {
    const account = await seedAccount(browser.db);
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer": landing(
        account.clientKey,
        `<form id="lead" method="post" onsubmit="event.preventDefault()"><input name="email" type="email" value="ann@example.com"></form>`,
      ),
    });
    const bodies: string[] = [];
    context.on("request", (r) => {
      if (r.url().endsWith("/api/collect")) bodies.push(r.postData() ?? "");
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await touches(account.accountId, 1);
    await page.evaluate(() => history.pushState(null, "", "/pricing"));
    await touches(account.accountId, 2);
    await page.evaluate(() => (document.getElementById("lead") as HTMLFormElement).requestSubmit());
    const stored = await touches(account.accountId, 3);
    assert.deepEqual(
      stored.map((t) => t.event_type),
      ["page_view", "page_view", "form_submit"],
    );
    const sent = bodies.map((b) => JSON.parse(b) as { type: string; id: string });
    assert.deepEqual(
      sent.map((b) => b.type),
      ["page_view", "page_view", "form_submit"],
    );
    for (const { id } of sent) assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(new Set(sent.map((b) => b.id)).size, 3);
    await context.close();
  });

  test("the fallback send of a beacon the browser refused carries the same id; a resend of it is stored once", async () => {
    const account = await seedAccount(browser.db);
    // A browser that refuses sendBeacon (a full queue, a body over its quota): the script falls back
    // to fetch with the same body.
    const refuse = `<script>window.refused = []; navigator.sendBeacon = (url, body) => { refused.push(body); return false; };</script>`;
    const context = await contextWith({
      "https://www.shop.example.co.uk/offer": landing(account.clientKey, "", refuse),
    });
    const fetched: string[] = [];
    context.on("request", (r) => {
      if (r.url().endsWith("/api/collect")) fetched.push(r.postData() ?? "");
    });
    const page = await context.newPage();
    await page.goto(AD_URL);
    await touches(account.accountId, 1);
    const refused = await page.evaluate(() => (window as unknown as { refused: string[] }).refused);
    assert.equal(refused.length, 1);
    assert.deepEqual(fetched, refused);
    assert.match((JSON.parse(fetched[0] ?? "{}") as { id: string }).id, /^[0-9a-f]{32}$/);
    // The network delivers the same beacon again.
    const status = await page.evaluate(
      (body) => fetch("https://ascribe.test/api/collect", { method: "POST", body }).then((r) => r.status),
      fetched[0] ?? "",
    );
    assert.equal(status, 204);
    await page.waitForTimeout(300);
    assert.equal((await touches(account.accountId, 1)).length, 1);
    await context.close();
  });
});
