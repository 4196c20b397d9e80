import assert from "node:assert/strict";
import { describe, test } from "node:test";
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
 * Submission detection in Chromium (SPEC "Tracking script behavior" 6): each vendor's iframe posting
 * the exact shapes of TRACKING.md §2 with its noise, a hostile origin posting them all, and the
 * page's own methods (native submit, a thank-you message, a thank-you path in a single-page app;
 * fetch and XHR posts). The conversion must reach the API with the ad of the
 * landing, once.
 */
const browser = useBrowser();
const SHOP = "https://www.shop.example.co.uk";

/** A stub vendor page that posts `messages` to its parent in order, as the vendor's embed does. */
const poster = (messages: unknown[]) =>
  `<!doctype html><script>for (const m of ${JSON.stringify(messages)}) parent.postMessage(m, "*")</script>`;

interface Vendor {
  name: string;
  /** The iframe's address (a stub of the vendor's embed). */
  frame: string;
  messages: unknown[];
  kind: "form_submit" | "booking";
  email: string | null;
}

const VENDORS: Vendor[] = [
  {
    name: "Calendly",
    frame: "https://calendly.com/acme/intro",
    messages: [
      { event: "calendly.profile_page_viewed", payload: {} },
      { event: "calendly.date_and_time_selected", payload: {} },
      {
        event: "calendly.event_scheduled",
        payload: {
          event: { uri: "https://api.calendly.com/scheduled_events/E1" },
          invitee: { uri: "https://api.calendly.com/scheduled_events/E1/invitees/I1" },
        },
      },
    ],
    kind: "booking",
    email: null,
  },
  {
    name: "Cal.com (V2 and the deprecated event, one booking; dry runs ignored)",
    frame: "https://app.cal.com/acme/30min/embed",
    messages: [
      { type: "__iframeReady", namespace: "", fullType: "CAL::__iframeReady", data: {} },
      {
        type: "dryRunBookingSuccessfulV2",
        namespace: "",
        fullType: "CAL::dryRunBookingSuccessfulV2",
        data: {},
      },
      {
        type: "bookingSuccessfulV2",
        namespace: "",
        fullType: "CAL::bookingSuccessfulV2",
        data: { uid: "b1", title: "Intro", startTime: "2026-12-01T10:00:00Z", status: "ACCEPTED" },
      },
      { type: "bookingSuccessful", namespace: "", fullType: "CAL::bookingSuccessful", data: {} },
    ],
    kind: "booking",
    email: null,
  },
  {
    name: "Typeform",
    frame: "https://form.typeform.com/to/abc",
    messages: [
      { type: "form-ready", embedId: "e1" },
      { type: "form-submit", embedId: "e1", responseId: "r1" },
    ],
    kind: "form_submit",
    email: null,
  },
  {
    name: "Tally (a JSON string)",
    frame: "https://tally.so/embed/abc",
    messages: [
      JSON.stringify({ event: "Tally.FormPageView", payload: { formId: "abc", page: 1 } }),
      JSON.stringify({
        event: "Tally.FormSubmitted",
        payload: {
          formId: "abc",
          respondentId: "r1",
          fields: [{ key: "q1", label: "Email", type: "INPUT_EMAIL", value: "tally.lead@example.com" }],
        },
      }),
    ],
    kind: "form_submit",
    email: "tally.lead@example.com",
  },
  {
    name: "Jotform",
    frame: "https://form.jotform.com/241000000000",
    messages: ["setHeight:640:241000000000", { action: "submission-completed", formID: "241000000000" }],
    kind: "form_submit",
    email: null,
  },
  {
    name: "Fillout",
    frame: "https://embed.fillout.com/t/abc",
    messages: [
      { type: "form_init", embedId: "e1" },
      { type: "form_resized", embedId: "e1", height: 600 },
      { type: "form_submit", embedId: "e1", submissionUuid: "s1" },
    ],
    kind: "form_submit",
    email: null,
  },
  {
    name: "GoHighLevel form (arrays; embedded_iframe_* is not a submission)",
    frame: "https://api.leadconnectorhq.com/widget/form/abc",
    messages: [
      ["highlevel.setHeight", { height: 600 }],
      ["set-sticky-contacts", "embedded_iframe_abc", "{}"],
      [
        "set-sticky-contacts",
        "_ud",
        JSON.stringify({ email: "ghl.lead@example.com", first_name: "Ann" }),
        "loc1",
        "sub1",
      ],
    ],
    kind: "form_submit",
    email: "ghl.lead@example.com",
  },
  {
    name: "GoHighLevel calendar",
    frame: "https://link.msgsndr.com/widget/booking/abc",
    messages: [
      ["fetch-query-params", {}],
      ["msgsndr-booking-complete", { fingerprint: "f1", calendarId: "c1" }],
    ],
    kind: "booking",
    email: null,
  },
  {
    name: "OnceHub booking",
    frame: "https://go.oncehub.com/acme",
    messages: [{ type: "oncehub.booking.scheduled", payload: { utm_params: {} } }],
    kind: "booking",
    email: null,
  },
  {
    name: "OnceHub form",
    frame: "https://go.oncehub.com/acme-form",
    messages: [{ type: "oncehub.form.completed", payload: {} }],
    kind: "form_submit",
    email: null,
  },
];

describe("track.js submission detection in Chromium", { skip }, () => {
  for (const vendor of VENDORS)
    test(`methods 2 and 3, ${vendor.name}: one ${vendor.kind} with the landing's ad`, async () => {
      const account = await seedAccount(browser.db);
      const context = await browser.contextWith({
        [`${SHOP}/offer`]: landing(account.clientKey, `<iframe src="${vendor.frame}"></iframe>`),
        [vendor.frame]: poster(vendor.messages),
      });
      const page = await context.newPage();
      await page.goto(`${SHOP}/offer${AD_QUERY}`);
      // The stub posts as soon as it loads, which may be before the page has been parsed: the script
      // then starts at the message, and its page view and the conversion leave in the same moment.
      const found = await touches(browser.db, account.accountId, 2);
      assert.deepEqual(found.map((t) => t.event_type).sort(), ["page_view", vendor.kind].sort());
      const conversion = found.find((t) => t.event_type === vendor.kind);
      assert.equal(conversion?.utm.campaign, "Spring");
      assert.equal(conversion?.ad_ids.ad_id, "120210000000003");
      // Once the visitor is known, the page view before the conversion is joined to the same contact.
      assert.deepEqual(
        found.map((t) => t.email),
        [vendor.email, vendor.email],
      );
      await context.close();
    });

  test("HubSpot's legacy form callbacks, posted by its script to this window: one form submission with the email", async () => {
    const account = await seedAccount(browser.db);
    const hubspot = [
      { type: "hsFormCallback", eventName: "onFormReady", id: "g1" },
      {
        type: "hsFormCallback",
        eventName: "onFormSubmit",
        id: "g1",
        data: [{ name: "email", value: "hs.lead@example.com" }],
      },
      { type: "hsFormCallback", eventName: "onFormSubmitted", id: "g1", data: { submissionValues: {} } },
    ];
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<script>addEventListener("load", () => { for (const m of ${JSON.stringify(hubspot)}) postMessage(m, "*") })</script>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    // Posted at load, a moment after the page view left: the server may store them in either order.
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(found.map((t) => [t.event_type, t.email]).sort(), [
      ["form_submit", "hs.lead@example.com"],
      ["page_view", "hs.lead@example.com"],
    ]);
    await context.close();
  });

  test("every shape from an unlisted origin, and from a listed host that is not one of the page's iframes, is ignored", async () => {
    const account = await seedAccount(browser.db);
    const all = VENDORS.flatMap((v) => v.messages);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<iframe src="https://calendly.evil.example/a"></iframe><iframe src="https://widgets.example.net/b"></iframe>`,
      ),
      "https://calendly.evil.example/a": poster(all),
      // A listed host two frames down: its parent is the unlisted widget, not this page.
      "https://widgets.example.net/b": `<iframe src="https://calendly.com/nested"></iframe>`,
      "https://calendly.com/nested": poster(all).replace("parent.postMessage", "top.postMessage"),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.waitForTimeout(1500);
    assert.deepEqual(
      (await storedTouches(browser.db, account.accountId)).map((t) => t.event_type),
      ["page_view"],
    );
    await context.close();
  });

  test("method 1, native submit: a lead form counts with its email; a search box does not", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<form id="search" action="/search"><input name="q"><button>Search</button></form>` +
          `<form id="lead" method="post" action="/lead"><input type="email" name="email" required>` +
          `<input type="tel" name="phone"><button>Send</button></form>`,
      ),
      [`${SHOP}/search`]: "<p>results</p>",
      [`${SHOP}/lead`]: "<p>sent</p>",
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.fill("#search [name=q]", "pricing");
    await Promise.all([page.waitForURL(/\/search/), page.click("#search button")]);
    await page.goBack();
    await page.fill("#lead [name=email]", "native.lead@example.com");
    await page.fill("#lead [name=phone]", "+44 20 7946 0000");
    await Promise.all([page.waitForURL(/\/lead/), page.click("#lead button")]);
    const found = await touches(browser.db, account.accountId, 3);
    // The landing, the way back to it, and the lead: the search sent nothing.
    assert.deepEqual(
      found.map((t) => [t.event_type, t.email]),
      [
        ["page_view", "native.lead@example.com"],
        ["page_view", "native.lead@example.com"],
        ["form_submit", "native.lead@example.com"],
      ],
    );
    assert.equal(found[2]?.utm.content, "Video 3");
    await context.close();
  });

  test("method 5: the box of a form where an email was typed comes to say thank you", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<div id="box"><form onsubmit="return false"><input type="email" name="email">` +
          `<button type="button" id="send">Send</button></form></div>` +
          `<script>send.onclick = () => { box.innerHTML = "<p>Thank you! We will call you today.</p>" }</script>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.fill("[name=email]", "dom.lead@example.com");
    await page.click("#send");
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(
      found.map((t) => [t.event_type, t.email]),
      [
        ["page_view", "dom.lead@example.com"],
        ["form_submit", "dom.lead@example.com"],
      ],
    );
    await context.close();
  });

  test("method 6: a single-page app moving to a thank-you path with pushState counts once, also after a reload", async () => {
    const account = await seedAccount(browser.db);
    const app =
      `<input type="email" id="email"><button id="go">Book</button>` +
      `<script>go.onclick = () => history.pushState({}, "", "/thank-you")</script>`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey, app),
      [`${SHOP}/thank-you`]: landing(account.clientKey, "<p>Thanks!</p>"),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.fill("#email", "spa.lead@example.com");
    await page.click("#go");
    // The route is a page view, and the lead (the two leave in the same moment).
    const found = await touches(browser.db, account.accountId, 3);
    assert.deepEqual(found.map((t) => `${t.event_type} ${t.email}`).sort(), [
      "form_submit spa.lead@example.com",
      "page_view spa.lead@example.com",
      "page_view spa.lead@example.com",
    ]);
    // The same thank-you path loaded again is a page view, not a second lead.
    await page.reload();
    await page.waitForTimeout(1200);
    assert.deepEqual((await touches(browser.db, account.accountId, 4)).map((t) => t.event_type).sort(), [
      "form_submit",
      "page_view",
      "page_view",
      "page_view",
    ]);
    await context.close();
  });

  test("a booking whose page then redirects to a thank-you path is one booking", async () => {
    const account = await seedAccount(browser.db);
    const redirect =
      `<iframe src="https://calendly.com/acme/intro"></iframe><script>addEventListener("message", (e) => {` +
      ` if (e.data.event === "calendly.event_scheduled") setTimeout(() => { location.href = "/thank-you" }, 200) })</script>`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey, redirect),
      "https://calendly.com/acme/intro": poster([{ event: "calendly.event_scheduled", payload: {} }]),
      [`${SHOP}/thank-you`]: landing(account.clientKey, "<p>See you soon</p>"),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await page.waitForURL(/thank-you/);
    await touches(browser.db, account.accountId, 3);
    await page.waitForTimeout(1200);
    assert.deepEqual((await storedTouches(browser.db, account.accountId)).map((t) => t.event_type).sort(), [
      "booking",
      "page_view",
      "page_view",
    ]);
    await context.close();
  });

  test("included twice, the script sends one page view", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(account.clientKey).replace(
        "</head>",
        `<script src="https://ascribe.test/api/track.js" data-client="${account.clientKey}"></script></head>`,
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.waitForTimeout(800);
    assert.equal((await storedTouches(browser.db, account.accountId)).length, 1);
    await context.close();
  });

  test("links (when pressed), iframes and embeds of listed tools carry the attribution; other links do not", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<a id="cal" href="https://calendly.com/acme/intro?month=2026-12">Book</a>` +
          `<a id="tf" href="https://form.typeform.com/to/abc">Quiz</a>` +
          `<a id="other" href="https://example.org/x">Elsewhere</a>` +
          `<div id="tally" data-tally-src="https://tally.so/embed/abc?transparentBackground=1"></div>` +
          `<iframe id="jot" src="https://form.jotform.com/241000000000"></iframe>`,
      ),
      "https://form.jotform.com/241000000000": "<p>form</p>",
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    // The iframe once the page has loaded, in an idle moment; links when pressed.
    await page.waitForFunction(() =>
      document.querySelector("#jot")?.getAttribute("src")?.includes("utm_source"),
    );
    for (const link of ["#cal", "#tf", "#other"]) await page.dispatchEvent(link, "mousedown");
    const query =
      "utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=Video+3&utm_term=Lookalike" +
      "&utm_campaign_id=120210000000001&utm_adset_id=120210000000002&utm_ad_id=120210000000003&fbclid=IwAR0AbCdE" +
      `&client_key=${account.clientKey}`;
    assert.equal(
      await page.getAttribute("#cal", "href"),
      `https://calendly.com/acme/intro?month=2026-12&${query}`,
    );
    assert.equal(await page.getAttribute("#tf", "href"), `https://form.typeform.com/to/abc#${query}`);
    assert.equal(await page.getAttribute("#other", "href"), "https://example.org/x");
    assert.equal(
      await page.getAttribute("#tally", "data-tally-src"),
      `https://tally.so/embed/abc?transparentBackground=1&${query}`,
    );
    assert.equal(await page.getAttribute("#jot", "src"), `https://form.jotform.com/241000000000?${query}`);
    await context.close();
  });
});

describe("track.js method 4 and single-page apps in Chromium", { skip }, () => {
  test("method 4: a fetch post with an email to this site is a lead; the same to an unlisted host is not", async () => {
    const account = await seedAccount(browser.db);
    const post = (url: string, email: string) =>
      `fetch("${url}", { method: "POST", body: JSON.stringify({ email: "${email}" }) })`;
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<button id="third" onclick='${post("https://api.tracker.example/identify", "seen@example.com")}'>a</button>` +
          `<button id="own" onclick='${post("/api/lead", "ajax.lead@example.com")}'>b</button>`,
        "",
      ),
      "https://api.tracker.example/identify": "{}",
      [`${SHOP}/api/lead`]: "{}",
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.click("#third");
    await page.waitForTimeout(800);
    await page.click("#own");
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(
      found.map((t) => [t.event_type, t.email]),
      [
        ["page_view", "ajax.lead@example.com"],
        ["form_submit", "ajax.lead@example.com"],
      ],
    );
    await context.close();
  });

  test("method 4: an XHR post to a listed form tool, answered with success", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<button id="send" onclick='const x = new XMLHttpRequest(); x.open("POST", "https://forms.hsforms.com/submissions"); x.setRequestHeader("content-type", "application/x-www-form-urlencoded"); x.send("firstname=Jo&email=xhr.lead%40example.com")'>send</button>`,
        "",
      ),
      "https://forms.hsforms.com/submissions": "{}",
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.click("#send");
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(
      found.map((t) => [t.event_type, t.email]),
      [
        ["page_view", "xhr.lead@example.com"],
        ["form_submit", "xhr.lead@example.com"],
      ],
    );
    await context.close();
  });

  test("a single-page app's route is a page view, its parameters merged (an email click keeps the ad)", async () => {
    const account = await seedAccount(browser.db);
    const context = await browser.contextWith({
      [`${SHOP}/offer`]: landing(
        account.clientKey,
        `<button id="go" onclick='history.pushState({}, "", "/pricing?utm_source=newsletter&utm_medium=email")'>go</button>`,
        "",
      ),
    });
    const page = await context.newPage();
    await page.goto(`${SHOP}/offer${AD_QUERY}`);
    await touches(browser.db, account.accountId, 1);
    await page.click("#go");
    const found = await touches(browser.db, account.accountId, 2);
    assert.deepEqual(
      found.map((t) => [t.event_type, t.utm.source, t.utm.medium]),
      [
        ["page_view", "facebook", "paid"],
        ["page_view", "newsletter", "email"],
      ],
    );
    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c.value]));
    assert.deepEqual(
      [cookies.utm_source, cookies.utm_medium, cookies.utm_campaign],
      ["newsletter", "email", "Spring"],
    );
    await context.close();
  });
});
