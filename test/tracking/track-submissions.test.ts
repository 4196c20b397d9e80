import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import {
  AD_QUERY,
  type Fixture,
  landing,
  browserSkip as skip,
  storedTouches,
  touches,
  useBrowser,
} from "../helpers/browser.ts";
import { seedAccount } from "../helpers/harness.ts";

/*
 * Submissions that real landing pages make and the script used to miss or count wrong (issue 17,
 * items 1 to 6), in Chromium on the served script: fetch and XHR lead posts, success blocks that
 * replace a form, form.submit() and its kin, thank-you paths by whole segments, message origins,
 * HubSpot's new forms and GoHighLevel's calendar.
 */
const browser = useBrowser();
const SHOP = "https://www.shop.example.co.uk";

interface Opened {
  accountId: string;
  context: BrowserContext;
  page: Page;
  /** Errors thrown in the page (the script must never throw on a page's traffic). */
  errors: Error[];
}

/**
 * A new account's landing page (with `body`), opened from the test ad; `more` are other fixtures.
 * With `clock`, the page's time is Playwright's from the start, so that a test can move it on.
 */
async function open(body: string, more: Record<string, Fixture> = {}, clock = false): Promise<Opened> {
  const account = await seedAccount(browser.db);
  const context = await browser.contextWith({ [`${SHOP}/offer`]: landing(account.clientKey, body), ...more });
  const page = await context.newPage();
  if (clock) await page.clock.install();
  const errors: Error[] = [];
  page.on("pageerror", (e) => errors.push(e));
  await page.goto(`${SHOP}/offer${AD_QUERY}`);
  await touches(browser.db, account.accountId, 1);
  return { accountId: account.accountId, context, page, errors };
}

/** The account's touchpoints as [event type, email], once `expected` are there (and no more came). */
async function seen(accountId: string, expected: number) {
  return (await touches(browser.db, accountId, expected)).map((t) => [t.event_type, t.email]);
}

/** Nothing but the page views so far, a second and a half later. */
async function onlyPageViews(accountId: string) {
  await new Promise((r) => setTimeout(r, 1500));
  return (await storedTouches(browser.db, accountId)).filter((t) => t.event_type !== "page_view");
}

/** A JSON API that echoes the body it received, with `status`. */
const echo =
  (status = 200): Fixture =>
  (request) => ({ status, body: JSON.stringify({ got: request.postData() ?? "" }) });

describe("track.js method 4: fetch and XHR lead posts", { skip }, () => {
  const LEADS = {
    "fetch(url, init) with a JSON body": {
      script: `fetch("/api/lead", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "fetch.lead@example.com" }) }).then((r) => r.json()).then((j) => { document.title = j.got })`,
      title: '{"email":"fetch.lead@example.com"}',
      contact: ["fetch.lead@example.com", null],
    },
    "fetch(new Request(...)) whose body the page's own fetch still sends": {
      script: `const request = new Request("/api/lead", { method: "POST", body: JSON.stringify({ name: "Jo", phone: "+44 20 7946 0000" }) }); fetch(request).then((r) => r.json()).then((j) => { document.title = j.got })`,
      title: '{"name":"Jo","phone":"+44 20 7946 0000"}',
      contact: [null, "+442079460000"],
    },
    "an XHR post of form data, answered 201, its onload run with the request as this": {
      script: `const x = new XMLHttpRequest(); x.open("POST", "/api/lead"); x.onload = function () { document.title = this.status + " " + JSON.parse(this.responseText).got.includes("xhr.lead@example.com") }; const f = new FormData(); f.append("email", "xhr.lead@example.com"); f.append("message", "Call me"); x.send(f)`,
      title: "201 true",
      contact: ["xhr.lead@example.com", null],
    },
  };
  for (const [name, lead] of Object.entries(LEADS))
    test(`${name}: one lead, and the page gets its own answer`, async () => {
      const { accountId, context, page, errors } = await open(
        `<button id="send" onclick='${lead.script}'>Send</button>`,
        { [`${SHOP}/api/lead`]: echo(name.includes("201") ? 201 : 200) },
      );
      await page.click("#send");
      await page.waitForFunction((title) => document.title === title, lead.title);
      const found = await touches(browser.db, accountId, 2);
      assert.deepEqual(
        found.map((t) => [t.event_type, t.email, t.phone]),
        [
          ["page_view", ...lead.contact],
          ["form_submit", ...lead.contact],
        ],
      );
      assert.equal(found[1]?.utm.campaign, "Spring");
      assert.deepEqual(errors, []);
      await context.close();
    });

  test("non-leads count nothing: a GET, 4xx and 5xx answers, an analytics ping, a third party's identify; then a real lead counts once", async () => {
    const post = (url: string, body: string) =>
      `fetch("${url}", { method: "POST", body: ${JSON.stringify(body)} })`;
    const calls = [
      `fetch("/api/lead?email=get.lead@example.com")`,
      post("/api/refused", JSON.stringify({ email: "refused@example.com" })),
      post("/api/broken", JSON.stringify({ email: "broken@example.com" })),
      post("/api/ping", JSON.stringify({ event: "scroll", depth: 75, at: 1764151200000 })),
      post(
        "https://api.segment.example/v1/identify",
        JSON.stringify({ traits: { email: "seen@example.com" } }),
      ),
      `(() => { const x = new XMLHttpRequest(); x.open("POST", "/api/refused"); x.send("email=xhr.refused%40example.com") })()`,
    ];
    const { accountId, context, page, errors } = await open(
      `<button id="noise" onclick='${calls.join(";")}'>noise</button>` +
        `<button id="lead" onclick='${post("/api/lead", "email=real.lead%40example.com&phone=")}'>lead</button>`,
      {
        [`${SHOP}/api/lead`]: echo(),
        [`${SHOP}/api/refused`]: echo(422),
        [`${SHOP}/api/broken`]: echo(500),
        [`${SHOP}/api/ping`]: echo(204),
        "https://api.segment.example/v1/identify": echo(),
      },
    );
    await page.click("#noise");
    assert.deepEqual(await onlyPageViews(accountId), []);
    await page.click("#lead");
    assert.deepEqual(await seen(accountId, 2), [
      ["page_view", "real.lead@example.com"],
      ["form_submit", "real.lead@example.com"],
    ]);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe("track.js method 5: a success block in place of the form", { skip }, () => {
  const BLOCKS = {
    "Webflow's .w-form-done revealed by a style change": {
      body:
        `<div class="w-form"><form id="wf"><input type="email" name="email"><input type="button" id="send" value="Send"></form>` +
        `<div class="w-form-done" style="display:none"><div>Got it.</div></div><div class="w-form-fail" style="display:none">Oops</div></div>` +
        `<script>send.onclick = () => { wf.style.display = "none"; document.querySelector(".w-form-done").style.display = "block" }</script>`,
      again: `document.querySelector(".w-form-done").style.display = "none"; document.querySelector(".w-form-done").style.display = "block"`,
    },
    "HubSpot's .submitted-message in place of its form": {
      body:
        `<div class="hbspt-form" id="hs"><form><input type="email" name="email"><button type="button" id="send">Submit</button></form></div>` +
        `<script>send.onclick = () => { hs.innerHTML = '<div class="submitted-message"><p>We will be in touch.</p></div>' }</script>`,
      again: `hs.firstChild.append(" Soon.")`,
    },
    "a block whose text says thank you": {
      body:
        `<div id="box"><form onsubmit="return false"><input type="email" name="email"><button type="button" id="send">Send</button></form></div>` +
        `<script>send.onclick = () => { box.innerHTML = "<p>Merci ! Nous vous rappelons aujourd’hui.</p>" }</script>`,
      again: `box.firstChild.append(" Merci encore.")`,
    },
  };
  for (const [name, block] of Object.entries(BLOCKS))
    test(`${name}: one form submission with what was typed, not one per later change`, async () => {
      const { accountId, context, page } = await open(block.body, {}, true);
      await page.fill("[name=email]", "block.lead@example.com");
      await page.click("#send");
      assert.deepEqual(await seen(accountId, 2), [
        ["page_view", "block.lead@example.com"],
        ["form_submit", "block.lead@example.com"],
      ]);
      // Past the 30-second window, the block changing again is not another lead.
      await page.clock.fastForward("00:40");
      await page.evaluate(block.again);
      await page.clock.fastForward("00:02");
      await page.waitForTimeout(800);
      assert.equal((await storedTouches(browser.db, accountId)).length, 2);
      await context.close();
    });
});

describe("track.js method 1: form.submit(), requestSubmit(), outside buttons, double clicks, invalid forms", {
  skip,
}, () => {
  const FORM =
    `<iframe name="sink"></iframe>` +
    `<form id="f" method="post" action="/lead" target="sink"><input type="email" name="email" required></form>` +
    `<input type="tel" name="phone" form="f"><button type="submit" form="f" id="outside">Send</button>` +
    `<button type="button" id="scripted" onclick="f.submit()">Scripted</button>` +
    `<button type="button" id="request" onclick="f.requestSubmit()">Request</button>`;
  const SINK = { [`${SHOP}/lead`]: "<p>sent</p>" };

  for (const [name, action] of [
    ["form.submit(), which fires no submit event", (p: Page) => p.click("#scripted")],
    ["requestSubmit()", (p: Page) => p.click("#request")],
    ["a double click on a button outside the form (form=)", (p: Page) => p.dblclick("#outside")],
  ] as const)
    test(`${name}: one lead with the form's email and its outside phone field`, async () => {
      const { accountId, context, page } = await open(FORM, SINK);
      await page.fill("[name=email]", "submit.lead@example.com");
      await page.fill("[name=phone]", "+44 20 7946 0000");
      await action(page);
      const found = await touches(browser.db, accountId, 2);
      assert.deepEqual(
        found.map((t) => [t.event_type, t.email, t.phone]),
        [
          ["page_view", "submit.lead@example.com", "+442079460000"],
          ["form_submit", "submit.lead@example.com", "+442079460000"],
        ],
      );
      await context.close();
    });

  test("a submit that fails validation counts zero", async () => {
    const { accountId, context, page } = await open(FORM, SINK);
    await page.fill("[name=phone]", "+44 20 7946 0000");
    await page.click("#outside");
    await page.click("#request");
    assert.deepEqual(await onlyPageViews(accountId), []);
    await context.close();
  });
});

describe("track.js method 6: thank-you paths by whole segments", { skip }, () => {
  const appWith = (move: string) => `<button id="go" onclick='${move}'>go</button>`;
  for (const [name, move, kind] of [
    ["pushState to /thank-you", `history.pushState({}, "", "/thank-you")`, "form_submit"],
    ["replaceState to /merci", `history.replaceState({}, "", "/merci")`, "form_submit"],
    ["a hash route to #/confirmation", `location.hash = "/confirmation"`, "form_submit"],
    ["pushState to /call-booked", `history.pushState({}, "", "/call-booked")`, "booking"],
  ] as const)
    test(`${name}: one ${kind}`, async () => {
      const { accountId, context, page } = await open(appWith(move));
      await page.click("#go");
      const found = await touches(browser.db, accountId, 3);
      // The route's page view and the conversion, with the landing's ad (both leave in the same
      // moment: the order they are stored in is the server's).
      assert.deepEqual(found.map((t) => t.event_type).sort(), ["page_view", "page_view", kind].sort());
      assert.equal(found.find((t) => t.event_type === kind)?.ad_ids.ad_id, "120210000000003");
      await context.close();
    });

  test("a full load of /thank-you counts; /blog/thank-you-notes, loaded or pushed, does not", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/blog/thank-you-notes`]: landing(
        account.clientKey,
        `<button id="go" onclick='history.pushState({}, "", "/success-stories")'>go</button>`,
      ),
      [`${SHOP}/thank-you`]: landing(account.clientKey),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/blog/thank-you-notes${AD_QUERY}`);
    await page.click("#go");
    assert.deepEqual(await onlyPageViews(account.accountId), []);
    await page.goto(`${SHOP}/thank-you`);
    const found = await touches(browser.db, account.accountId, 4);
    assert.deepEqual(found.map((t) => t.event_type).sort(), [
      "form_submit",
      "page_view",
      "page_view",
      "page_view",
    ]);
    await context.close();
  });
});

describe("track.js methods 2 and 3: origins, noise, and the vendors missed", { skip }, () => {
  const SCHEDULED = { event: "calendly.event_scheduled", payload: {} };

  test("a look-alike host, another vendor's host and the page itself are ignored, noise never throws, and a genuine booking right after counts once", async () => {
    const post = (messages: unknown[]) =>
      `<!doctype html><script>for (const m of ${JSON.stringify(messages)}) parent.postMessage(m, "*")</script>`;
    const noise = [
      null,
      7,
      "{broken json",
      "[iFrameSizer]frame1:300:600",
      [],
      "",
      { event: "calendly.page_height" },
    ];
    const { accountId, context, page, errors } = await open(
      `<iframe src="https://calendly.com.evil.example/a"></iframe><iframe src="https://evilcalendly.com/b"></iframe>` +
        `<iframe src="https://form.typeform.com/to/c"></iframe>` +
        `<script>addEventListener("load", () => postMessage(${JSON.stringify(SCHEDULED)}, "*"))</script>` +
        `<button id="book" onclick='document.body.insertAdjacentHTML("beforeend", "<iframe src=https://calendly.com/acme/intro></iframe>")'>Book</button>`,
      {
        "https://calendly.com.evil.example/a": post([SCHEDULED]),
        "https://evilcalendly.com/b": post([SCHEDULED]),
        "https://form.typeform.com/to/c": post([SCHEDULED]),
        "https://calendly.com/acme/intro": post([...noise, SCHEDULED, SCHEDULED]),
      },
    );
    assert.deepEqual(await onlyPageViews(accountId), []);
    await page.click("#book");
    assert.deepEqual(await seen(accountId, 2), [
      ["page_view", null],
      ["booking", null],
    ]);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("HubSpot's new forms: the window event hs-form-event:on-submission:success is one form submission", async () => {
    const { accountId, context, page } = await open(
      `<div class="hs-form-frame" data-form-id="f1"></div><input type="email" id="email">`,
    );
    await page.fill("#email", "hs.new@example.com");
    await page.evaluate(() => {
      dispatchEvent(
        new CustomEvent("hs-form-event:on-submission:success", {
          detail: { formId: "f1", instanceId: "i1" },
        }),
      );
      dispatchEvent(new CustomEvent("hs-form-event:on-ready", { detail: { formId: "f1" } }));
    });
    assert.deepEqual(await seen(accountId, 2), [
      ["page_view", "hs.new@example.com"],
      ["form_submit", "hs.new@example.com"],
    ]);
    await context.close();
  });

  test("GoHighLevel's calendar (an array message from leadconnectorhq.com) followed at once by a redirect: one booking", async () => {
    const redirect = `<iframe src="https://api.leadconnectorhq.com/widget/booking/abc"></iframe><script>addEventListener("message", (e) => {
      if (Array.isArray(e.data) && e.data[0] === "msgsndr-booking-complete") location.href = "/thank-you" })</script>`;
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey, redirect),
      "https://api.leadconnectorhq.com/widget/booking/abc": `<!doctype html><script>
        parent.postMessage(["highlevel.setHeight", { height: 700 }], "*");
        setTimeout(() => parent.postMessage(["msgsndr-booking-complete", { fingerprint: "f1", calendarId: "c1" }], "*"), 500)</script>`,
      [`${SHOP}/thank-you`]: landing(account.clientKey, "<p>See you soon</p>"),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.waitForURL(/thank-you/);
    const found = await touches(browser.db, account.accountId, 3);
    assert.deepEqual(found.map((t) => t.event_type).sort(), ["booking", "page_view", "page_view"]);
    assert.equal(found.find((t) => t.event_type === "booking")?.utm.campaign, "Spring");
    await context.close();
  });
});
