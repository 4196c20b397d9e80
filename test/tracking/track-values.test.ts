import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import {
  AD_QUERY,
  ASSETS,
  landing,
  SERVICE,
  browserSkip as skip,
  storedTouches,
  touches,
  useBrowser,
} from "../helpers/browser.ts";
import { seedAccount } from "../helpers/harness.ts";

/*
 * Values that reached cookies, fields and the API wrong or not at all (issue 17, items 7 to 12), and
 * a consent manager that answers late (item 13), in Chromium on the served script, read back where
 * a user reads them: the browser's cookies, the page's fields and framework state, the API.
 */
const browser = useBrowser();
const SHOP = "https://www.shop.example.co.uk";

interface ApiTouch {
  event_type: string;
  url: string;
  utm: Record<string, string | null>;
  ad_ids: Record<string, string | null>;
  click_ids: Record<string, string>;
  channel: string | null;
}

const cookiesOf = async (context: BrowserContext) =>
  Object.fromEntries((await context.cookies()).map((c) => [c.name, decodeURIComponent(c.value)]));
const fieldValue = (page: Page, selector: string) =>
  page.$eval(selector, (e) => (e as HTMLInputElement).value);

describe("track.js: unresolved macros", { skip }, () => {
  const MACROS =
    "?utm_source=facebook&utm_medium=paid&utm_campaign={{campaign.name}}&utm_content=%7B%7Bad.name%7D%7D" +
    "&utm_term=%257B%257Badset.name%257D%257D&utm_adset_id={{adset.id}}&utm_campaign_id={campaignid}&utm_ad_id=__AID__";
  const FORM = `<form><input type="hidden" name="utm_campaign"><input type="hidden" name="utm_content"><input type="hidden" name="utm_adset_id"></form>`;

  test("after a good ad click, the same ad with macros (raw, encoded once, twice) changes no cookie or field; its page view still reports them", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({ [`${SHOP}/offer`]: landing(account.clientKey, FORM) });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.goto(`${SHOP}/offer${MACROS}`);
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(
      [found[1]?.utm.campaign, found[1]?.utm.content, found[1]?.utm.term, found[1]?.ad_ids.adset_id],
      ["{{campaign.name}}", "{{ad.name}}", "%7B%7Badset.name%7D%7D", "{{adset.id}}"],
    );
    const cookies = await cookiesOf(context);
    assert.deepEqual(
      [cookies.utm_campaign, cookies.utm_content, cookies.utm_term, cookies.first_utm_campaign],
      ["Spring", "Video 3", "Lookalike", "Spring"],
    );
    await page.waitForFunction(
      () => (document.querySelector("[name=utm_campaign]") as HTMLInputElement).value,
    );
    assert.deepEqual(
      [
        await fieldValue(page, "[name=utm_campaign]"),
        await fieldValue(page, "[name=utm_content]"),
        await fieldValue(page, "[name=utm_adset_id]"),
      ],
      ["Spring", "Video 3", "120210000000002"],
    );
    await context.close();
  });

  test("a first visit with macros: no macro in a cookie or a field", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({ [`${SHOP}/offer`]: landing(account.clientKey, FORM) });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${MACROS}`);
    await touches(browser.db, account.accountId, 1);
    await page.waitForTimeout(500);
    const cookies = await cookiesOf(context);
    assert.deepEqual(
      [cookies.utm_source, cookies.utm_campaign, cookies.utm_content, cookies.first_utm_campaign],
      ["facebook", undefined, undefined, undefined],
    );
    assert.deepEqual(JSON.parse(cookies._ascribe ?? "{}").l, { utm_source: "facebook", utm_medium: "paid" });
    assert.deepEqual(
      [await fieldValue(page, "[name=utm_campaign]"), await fieldValue(page, "[name=utm_content]")],
      ["", ""],
    );
    await context.close();
  });
});

describe("track.js: hash routes, click-id case, assists, old cookies", { skip }, () => {
  test("parameters after #/lp? are captured, a click id keeps its case from URL to cookie to API, and a hash route is a page view", async () => {
    const account = await seedAccount(browser.db);
    const key = await account.key(["read:journeys"]);
    const context = await browser.contextWith({
      [`${SHOP}/app`]: landing(
        account.clientKey,
        `<button id="go" onclick='location.hash = "/pricing?utm_source=newsletter&utm_medium=email"'>go</button>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(
      `${SHOP}/app#/lp?utm_source=google&utm_medium=cpc&utm_campaign=Brand&gclid=Cj0KCQiA_MiXeD-Ab1&ScCid=Ab_Cd`,
    );
    await touches(browser.db, account.accountId, 1);
    const state = JSON.parse((await cookiesOf(context))._ascribe ?? "{}");
    assert.deepEqual(state.l, {
      utm_source: "google",
      utm_medium: "cpc",
      utm_campaign: "Brand",
      gclid: "Cj0KCQiA_MiXeD-Ab1",
      sccid: "Ab_Cd",
    });
    await page.click("#go");
    await touches(browser.db, account.accountId, 2);
    const { touchpoints } = await browser.api<{ touchpoints: ApiTouch[] }>(key, "/touchpoints?kind=web");
    const [pricing, lp] = touchpoints;
    assert.deepEqual(
      [lp?.utm.source, lp?.utm.campaign, lp?.click_ids],
      ["google", "Brand", { gclid: "Cj0KCQiA_MiXeD-Ab1", sccid: "Ab_Cd" }],
    );
    assert.deepEqual(
      [pricing?.utm.source, pricing?.utm.medium, pricing?.url],
      ["newsletter", "email", `${SHOP}/app#/pricing?utm_source=newsletter&utm_medium=email`],
    );
    await context.close();
  });

  test("utm_channel=email after an ad click: the page view and the lead reach the API with the ad's UTMs, ids and click id", async () => {
    const account = await seedAccount(browser.db);
    const key = await account.key(["read:journeys"]);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey),
      [`${SHOP}/news`]: landing(
        account.clientKey,
        `<form id="f" onsubmit="return false"><input type="email" name="email"><button>Go</button></form>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.goto(`${SHOP}/news?utm_channel=email`);
    await touches(browser.db, account.accountId, 2);
    await page.fill("[name=email]", "assist.lead@example.com");
    await page.click("#f button");
    await touches(browser.db, account.accountId, 3);
    const { touchpoints } = await browser.api<{ touchpoints: ApiTouch[] }>(
      key,
      "/journeys/contact?email=assist.lead@example.com&pageviews=true",
    );
    const ad = (t: ApiTouch | undefined) => [
      t?.event_type,
      t?.utm.source,
      t?.utm.campaign,
      t?.utm.content,
      t?.ad_ids.ad_id,
      t?.click_ids.fbclid,
      t?.channel,
    ];
    assert.deepEqual(touchpoints.map(ad), [
      ["page_view", "facebook", "Spring", "Video 3", "120210000000003", "IwAR0AbCdE", null],
      ["page_view", "facebook", "Spring", "Video 3", "120210000000003", "IwAR0AbCdE", "email"],
      ["form_submit", "facebook", "Spring", "Video 3", "120210000000003", "IwAR0AbCdE", "email"],
    ]);
    await context.close();
  });

  test("host-only cookies of the same names left on the host are expired: the page reads one utm_source, the domain's", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({ [`${SHOP}/offer`]: landing(account.clientKey) });
    await context.addCookies(
      ["utm_source", "utm_campaign", "_ascribe"].map((name) => ({ name, value: "old", url: `${SHOP}/` })),
    );
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    const seen = await page.evaluate(() =>
      document.cookie.split("; ").filter((c) => /^(utm_source|utm_campaign|_ascribe)=/.test(c)),
    );
    assert.deepEqual(seen.map((c) => c.split("=")[0]).sort(), ["_ascribe", "utm_campaign", "utm_source"]);
    assert.ok(seen.includes("utm_source=facebook"), seen.join("; "));
    const domains = (await context.cookies()).filter((c) => c.name === "utm_source").map((c) => c.domain);
    assert.deepEqual(domains, [".example.co.uk"]);
    await context.close();
  });
});

describe("track.js: hidden fields", { skip }, () => {
  test("client_key in forms present at load and added later; a field with its own value keeps it", async () => {
    const account = await seedAccount(browser.db);
    const late = `<script>addEventListener("load", () => setTimeout(() => document.body.insertAdjacentHTML("beforeend",
      '<form id="late"><input type="hidden" name="client_key"><input type="hidden" name="utm_campaign"></form>'), 600))</script>`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<form id="early"><input type="hidden" name="client_key"><input type="hidden" name="utm_source" value="partner">` +
          `<input name="utm_medium"><input type="hidden" name="fbclid"></form>${late}`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.waitForSelector("#late", { state: "attached" });
    await page.waitForFunction(
      () => (document.querySelector("#late [name=client_key]") as HTMLInputElement).value,
    );
    const values = await page.$$eval("input", (inputs) =>
      (inputs as HTMLInputElement[]).map((i) => `${i.closest("form")?.id}.${i.name}=${i.value}`),
    );
    assert.deepEqual(values, [
      `early.client_key=${account.clientKey}`,
      "early.utm_source=partner",
      "early.utm_medium=paid",
      "early.fbclid=IwAR0AbCdE",
      `late.client_key=${account.clientKey}`,
      "late.utm_campaign=Spring",
    ]);
    await context.close();
  });

  test("React and Vue controlled inputs: the value reaches the framework's own state", async () => {
    const account = await seedAccount(browser.db);
    const react = `
      const h = React.createElement;
      function App() {
        const [values, set] = React.useState({});
        const field = (name) => h("input", { name, value: values[name] || "", onChange: (e) => set((v) => ({ ...v, [name]: e.target.value })) });
        return h("form", null, field("utm_source"), field("utm_campaign"), field("client_key"), h("output", { id: "react-state" }, JSON.stringify(values)));
      }
      ReactDOM.createRoot(document.getElementById("react")).render(h(App));`;
    const vue = `Vue.createApp({ data: () => ({ utm_content: "", gclid: "" }),
      template: '<form><input name="utm_content" v-model="utm_content"><input type="hidden" name="utm_ad_id" :value="utm_content"><output id="vue-state">{{ utm_content }}</output></form>' }).mount("#vue")`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<div id="react"></div><div id="vue"></div>` +
          `<script src="${ASSETS}/react.js"></script><script src="${ASSETS}/react-dom.js"></script><script src="${ASSETS}/vue.js"></script>` +
          `<script>${react};${vue}</script>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.waitForFunction(() =>
      document.querySelector("#react-state")?.textContent?.includes("client_key"),
    );
    assert.deepEqual(JSON.parse((await page.textContent("#react-state")) ?? "{}"), {
      utm_source: "facebook",
      utm_campaign: "Spring",
      client_key: account.clientKey,
    });
    await page.waitForFunction(() => document.querySelector("#vue-state")?.textContent);
    assert.equal(await page.textContent("#vue-state"), "Video 3");
    await context.close();
  });
});

describe("track.js: data-decorate", { skip }, () => {
  test("hosts listed on the tag and elements marked with it get the attribution; other links do not", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<a id="listed" href="https://book.forms-acme.io/call">Call</a>` +
          `<a id="marked" data-decorate href="https://partner.example/apply?ref=7">Apply</a>` +
          `<a id="other" href="https://partner.example/about">About</a>`,
      ).replace("data-client", 'data-decorate="forms-acme.io, other.example" data-client'),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    for (const link of ["#listed", "#marked", "#other"]) await page.dispatchEvent(link, "mousedown");
    const campaign = async (id: string) =>
      new URL((await page.getAttribute(id, "href")) ?? "").searchParams.get("utm_campaign");
    assert.deepEqual(
      [await campaign("#listed"), await campaign("#marked"), await campaign("#other")],
      ["Spring", "Spring", null],
    );
    assert.equal(new URL((await page.getAttribute("#marked", "href")) ?? "").searchParams.get("ref"), "7");
    await context.close();
  });
});

describe("track.js: Calendly iframes written by hand", { skip }, () => {
  test("get embed_domain in their address, so that Calendly's booking message comes and counts", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<iframe id="cal" src="https://calendly.com/acme/intro"></iframe>`,
      ),
      // Calendly's embed posts messages only when told where it is embedded.
      "https://calendly.com/acme/intro": `<!doctype html><script>if (new URLSearchParams(location.search).get("embed_domain"))
        parent.postMessage({ event: "calendly.event_scheduled", payload: {} }, "*")</script>`,
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(found.map((t) => t.event_type).sort(), ["booking", "page_view"]);
    const src = new URL((await page.getAttribute("#cal", "src")) ?? "");
    assert.equal(src.searchParams.get("embed_domain"), "www.shop.example.co.uk");
    assert.equal(src.searchParams.get("utm_campaign"), "Spring");
    await context.close();
  });
});

describe("track.js: a consent manager that defines itself after the script and answers a second later", {
  skip,
}, () => {
  /** The page: track.js first in the head, then a TCF stub that answers after a second. */
  const page = (clientKey: string, granted: boolean) => `<!doctype html><html><head>
    <script src="${SERVICE}/api/track.js" data-client="${clientKey}"></script>
    <script>window.__tcfapi = (command, version, callback) => {
      if (command === "addEventListener") setTimeout(() => callback({ gdprApplies: true, eventStatus: "useractioncomplete",
        purpose: { consents: { 1: ${granted}, 7: ${granted} } } }, true), 1000) }</script>
    </head><body><p>Offer</p></body></html>`;

  test("a decline: nothing sent, no cookie written, not even the probe", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({ [`${SHOP}/offer`]: page(account.clientKey, false) });
    const tab = await context.newPage();
    await tab.goto(`${SHOP}/offer${AD_QUERY}`);
    await tab.waitForTimeout(2500);
    assert.deepEqual(await storedTouches(browser.db, account.accountId), []);
    assert.deepEqual(await context.cookies(), []);
    assert.equal(await tab.evaluate(() => document.cookie), "");
    await context.close();
  });

  test("a grant: tracking starts with the landing's parameters", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({ [`${SHOP}/offer`]: page(account.clientKey, true) });
    const tab = await context.newPage();
    await tab.goto(`${SHOP}/offer${AD_QUERY}`);
    const [view] = await touches(browser.db, account.accountId, 1);
    assert.equal(view?.utm.campaign, "Spring");
    assert.equal((await cookiesOf(context)).utm_content, "Video 3");
    await context.close();
  });
});
