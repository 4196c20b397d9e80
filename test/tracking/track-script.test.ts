import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { beaconSchema } from "../../src/ingest/beacon.ts";
import {
  buildTrackScript,
  TRACK_SCRIPT_BUDGET,
  TRACK_SCRIPT_CI_LIMIT,
  type TrackScript,
} from "../../src/tracking/track-script.ts";
import {
  beaconId,
  classify,
  contactIn,
  contactOf,
  cookieDomains,
  decorate,
  firstTouch,
  HUBSPOT,
  isAdClick,
  isMacro,
  merge,
  newId,
  parseTouch,
  type State,
  textOf,
  thanksKind,
  VENDORS,
  vendorOf,
} from "../../tracker/src/core.ts";
import { createTestApp, openTestDatabase } from "../helpers/harness.ts";

let served: TrackScript;
before(async () => {
  served = await buildTrackScript();
});

describe("track.js build", () => {
  test("one served script, every behaviour in it, at most 4,100 bytes gzip (the CI limit under the 5,000-byte budget)", () => {
    assert.ok(
      served.gzipBytes <= TRACK_SCRIPT_CI_LIMIT,
      `track.js is ${served.gzipBytes} bytes gzip (CI limit ${TRACK_SCRIPT_CI_LIMIT}, budget under ${TRACK_SCRIPT_BUDGET})`,
    );
    assert.ok(TRACK_SCRIPT_CI_LIMIT < TRACK_SCRIPT_BUDGET);
    assert.equal(served.minifiedBytes, Buffer.byteLength(served.code));
    assert.equal(served.gzipBytes, served.gzip.length);
    assert.equal(gunzipSync(served.gzip).toString(), served.code);
    assert.match(served.etag, /^"[\w-]{27}"$/);
    // What the reduced variant used to leave out: method 4, single-page routes, the beacon's
    // fallback, data-decorate; and TCF.
    for (const part of [/XMLHttpRequest/, /pushState/, /keepalive/, /data-decorate/, /__tcfapi/])
      assert.match(served.code, part);
    // V8's compile hint comes first, or it is not read.
    assert.ok(served.code.startsWith("//# allFunctionsCalledOnLoad\n"));
  });

  test("the same sources build the same bytes and ETag", async () => {
    const again = await buildTrackScript();
    assert.equal(again.code, served.code);
    assert.equal(again.etag, served.etag);
  });
});

describe("GET /api/track.js", () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  let app: Awaited<ReturnType<typeof createTestApp>>;
  before(async () => {
    db = await openTestDatabase();
    app = await createTestApp(db);
  });
  after(async () => {
    await app.close();
    await app.audit.close();
    await db.close();
  });

  test("serves the built script, cacheable for an hour, with an ETag", async () => {
    const res = await app.inject({ method: "GET", url: "/api/track.js" });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "application/javascript; charset=utf-8");
    assert.equal(res.headers["cache-control"], "public, max-age=3600");
    assert.equal(res.headers.etag, served.etag);
    assert.equal(res.headers["content-encoding"], undefined);
    assert.equal(res.body, served.code);
    const head = await app.inject({ method: "HEAD", url: "/api/track.js" });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers["cache-control"], "public, max-age=3600");
    assert.equal(head.headers.etag, served.etag);
  });

  test("a matching If-None-Match answers 304 without a body", async () => {
    for (const tag of [served.etag, `W/${served.etag}`, `"other", ${served.etag}`, "*"]) {
      const res = await app.inject({
        method: "GET",
        url: "/api/track.js",
        headers: { "if-none-match": tag },
      });
      assert.equal(res.statusCode, 304, tag);
      assert.equal(res.body, "");
      assert.equal(res.headers.etag, served.etag);
      assert.equal(res.headers["cache-control"], "public, max-age=3600");
    }
    const stale = await app.inject({
      method: "GET",
      url: "/api/track.js",
      headers: { "if-none-match": '"old"' },
    });
    assert.equal(stale.statusCode, 200);
  });

  test("gzip when accepted, under its own ETag", async () => {
    const res = await app.inject({
      method: "GET",
      url: "/api/track.js",
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-encoding"], "gzip");
    assert.equal(res.headers.vary, "Accept-Encoding");
    assert.notEqual(res.headers.etag, served.etag);
    assert.equal(gunzipSync(res.rawPayload).toString(), served.code);
    const again = await app.inject({
      method: "GET",
      url: "/api/track.js",
      headers: { "accept-encoding": "gzip", "if-none-match": String(res.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
  });
});

const T0 = Date.UTC(2026, 4, 1, 9);
const MINUTE = 60_000;
const DAY = 86_400_000;
const AD_QUERY =
  "?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=Video+3&utm_term=LAL" +
  "&utm_campaign_id=120210000000001&utm_ad_id=120210000000003&utm_adset_id=120210000000002&fbclid=IwAR3xYZ_aBc-Def";
const AD_TOUCH = {
  utm_source: "facebook",
  utm_medium: "paid",
  utm_campaign: "Spring",
  utm_content: "Video 3",
  utm_term: "LAL",
  utm_campaign_id: "120210000000001",
  utm_ad_id: "120210000000003",
  utm_adset_id: "120210000000002",
  fbclid: "IwAR3xYZ_aBc-Def",
};

describe("tracker core: parameters", () => {
  test("utm_* by exact name and click ids in any case; values as sent, decoded once", () => {
    assert.deepEqual(parseTouch(AD_QUERY), AD_TOUCH);
    assert.deepEqual(
      parseTouch(
        "?UTM_Source=x&utmSource=y&utm_channel=email&ScCid=Ab1&obOrigUrl=u&GCLID=Cj0&mc_cid=1&_hsenc=2",
      ),
      { utm_channel: "email", sccid: "Ab1", oborigurl: "u", gclid: "Cj0" },
    );
    // Never lowercased, never decoded a second time; a repeated parameter keeps its first value.
    assert.deepEqual(parseTouch("?fbclid=IwAR_MiXeD%2520case&fbclid=second"), {
      fbclid: "IwAR_MiXeD%20case",
    });
    assert.equal(parseTouch(`?utm_campaign=${"x".repeat(600)}`).utm_campaign?.length, 500);
    assert.deepEqual(parseTouch("?utm_source=&gclid="), {});
  });

  test("an ad click: ad ids, click ids or a paid medium, never a utm_channel link", () => {
    assert.equal(isAdClick({ utm_medium: "paid_social" }), true);
    assert.equal(isAdClick({ utm_medium: "CPC" }), true);
    assert.equal(isAdClick({ gclid: "x" }), true);
    assert.equal(isAdClick({ utm_adset_id: "1" }), true);
    assert.equal(isAdClick({ utm_source: "newsletter", utm_medium: "email", utm_campaign: "may" }), false);
    assert.equal(isAdClick({ utm_channel: "email", utm_ad_id: "1" }), false);
    assert.equal(isAdClick({}), false);
  });

  test("a beacon's params are sorted by the service into utm, ad_ids and click_ids", () => {
    const parsed = beaconSchema.safeParse({
      type: "form_submit",
      visitor_id: newId(),
      url: "https://example.com/",
      params: { ...AD_TOUCH, utm_channel: "email", gclid: "Cj0K" },
    });
    assert.equal(parsed.success, true);
    assert.deepEqual(parsed.data, {
      type: "form_submit",
      visitor_id: parsed.data?.visitor_id,
      url: "https://example.com/",
      utm: {
        source: "facebook",
        medium: "paid",
        campaign: "Spring",
        content: "Video 3",
        term: "LAL",
        channel: "email",
      },
      ad_ids: { campaign_id: "120210000000001", ad_id: "120210000000003", adset_id: "120210000000002" },
      click_ids: { fbclid: "IwAR3xYZ_aBc-Def", gclid: "Cj0K" },
    });
    // Every click id of TRACKING §5 passes, in the case the script names it.
    const every = parseTouch(
      "?gclid=a&gbraid=a&wbraid=a&dclid=a&gclsrc=a&gad_source=a&gad_campaignid=a&fbclid=a&msclkid=a&ttclid=a&li_fat_id=a&twclid=a" +
        "&ScCid=a&epik=a&rdt_cid=a&qclid=a&tblci=a&dicbo=a&obOrigUrl=a&yclid=a&irclickid=a&irclid=a&cjevent=a",
    );
    assert.equal(Object.keys(every).length, 23);
    for (const name of Object.keys(every)) assert.match(name, /^[a-z_]{2,24}$/);
    const base = { type: "page_view", visitor_id: newId(), url: "https://example.com/" };
    assert.equal(beaconSchema.safeParse({ ...base, params: { gclid: "a", fbclid: "b" } }).success, true);
    // Refused: an untracked utm_ name, a name in capitals, more than 12 click ids.
    assert.equal(beaconSchema.safeParse({ ...base, params: { utm_foo: "a" } }).success, false);
    assert.equal(beaconSchema.safeParse({ ...base, params: { GCLID: "a" } }).success, false);
    assert.equal(beaconSchema.safeParse({ ...base, params: every }).success, false);
  });

  test("ids are 8 to 64 characters of [A-Za-z0-9_-]", () => {
    for (let i = 0; i < 200; i++) assert.match(newId(), /^[A-Za-z0-9_-]{8,64}$/);
  });

  test("a beacon's id: 32 hex digits (128 random bits), new each time, accepted by the service", () => {
    const ids = Array.from({ length: 1_000 }, beaconId);
    for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(new Set(ids).size, 1_000);
    // Each of the 16 bytes takes its two digits, a leading zero included: every digit shows up at
    // every position over 1,000 ids.
    for (let i = 0; i < 32; i++) assert.equal(new Set(ids.map((id) => id[i])).size, 16, `position ${i}`);
    const base = { type: "page_view", visitor_id: newId(), url: "https://example.com/" };
    assert.equal(beaconSchema.safeParse({ ...base, id: beaconId() }).success, true);
  });
});

describe("tracker core: channel versus ad (merge)", () => {
  const adClick = () => merge(undefined, parseTouch(AD_QUERY), T0);

  test("a first ad click: a visitor, a session and the whole attribution", () => {
    const state = adClick();
    assert.match(state.v, /^[a-z0-9]{8,64}$/);
    assert.match(state.s, /^[a-z0-9]{8,64}$/);
    assert.deepEqual({ ...state, v: "V", s: "S" }, { v: "V", s: "S", u: T0, l: AD_TOUCH, t: T0, p: 1 });
  });

  test("an email click after an ad click: source and medium follow, campaign and ids stay", () => {
    const first = adClick();
    const state = merge(
      first,
      parseTouch("?utm_source=newsletter&utm_medium=email&utm_campaign=may"),
      T0 + DAY,
    );
    assert.deepEqual(state.l, {
      utm_source: "newsletter",
      utm_medium: "email",
      utm_campaign: "Spring",
      utm_content: "Video 3",
      utm_term: "LAL",
      utm_campaign_id: "120210000000001",
      utm_ad_id: "120210000000003",
      utm_adset_id: "120210000000002",
      fbclid: "IwAR3xYZ_aBc-Def",
    });
    assert.equal(state.p, 1);
    assert.equal(state.t, T0 + DAY);
    assert.equal(state.v, first.v);
  });

  test("utm_channel=email records the assist and changes nothing else", () => {
    const first = adClick();
    const state = merge(structuredClone(first), parseTouch("?utm_channel=email"), T0 + DAY);
    assert.deepEqual(state, { ...first, s: state.s, u: T0 + DAY, a: "email" });
    // With a source on the same link, source and medium follow (the medium it carries: none).
    const sourced = merge(structuredClone(first), parseTouch("?utm_channel=email&utm_source=crm"), T0 + DAY);
    assert.deepEqual(sourced.l, { ...AD_TOUCH, utm_source: "crm", utm_medium: undefined });
    assert.equal(sourced.a, "email");
  });

  test("a new ad click replaces everything", () => {
    const first = merge(adClick(), parseTouch("?utm_source=newsletter&utm_medium=email"), T0 + DAY);
    const state = merge(
      first,
      parseTouch("?utm_source=google&utm_medium=cpc&utm_campaign=Brand&gclid=Cj0KCQ"),
      T0 + 2 * DAY,
    );
    assert.deepEqual(state.l, {
      utm_source: "google",
      utm_medium: "cpc",
      utm_campaign: "Brand",
      gclid: "Cj0KCQ",
    });
    assert.equal(state.p, 1);
  });

  test("without an ad click held, the latest touch is the attribution", () => {
    const email = merge(
      undefined,
      parseTouch("?utm_source=newsletter&utm_medium=email&utm_campaign=may"),
      T0,
    );
    assert.deepEqual(email.l, { utm_source: "newsletter", utm_medium: "email", utm_campaign: "may" });
    assert.equal(email.p, 0);
    const bio = merge(email, parseTouch("?utm_source=instagram&utm_medium=bio"), T0 + MINUTE);
    assert.deepEqual(bio.l, { utm_source: "instagram", utm_medium: "bio" });
  });

  test("a page without parameters keeps everything; 30 days after its touch the attribution ends", () => {
    const first = adClick();
    const later = merge(structuredClone(first), {}, T0 + 29 * DAY);
    assert.deepEqual(later.l, AD_TOUCH);
    assert.equal(later.t, T0);
    const expired = merge(later, {}, T0 + 31 * DAY);
    assert.deepEqual(expired.l, {});
    assert.equal(expired.p, 0);
    assert.equal(expired.v, first.v);
  });

  test("a session lasts while pages come within 30 minutes", () => {
    const first = adClick();
    const same = merge(structuredClone(first), {}, T0 + 29 * MINUTE);
    assert.equal(same.s, first.s);
    const next = merge(structuredClone(same), {}, T0 + 29 * MINUTE + 31 * MINUTE);
    assert.notEqual(next.s, first.s);
    assert.equal(next.v, first.v);
  });

  test("a state read back from the cookie (JSON) merges the same", () => {
    const first = adClick();
    const state = merge(JSON.parse(JSON.stringify(first)) as State, parseTouch("?utm_channel=email"), T0 + 1);
    assert.deepEqual(state.l, AD_TOUCH);
  });
});

describe("tracker core: first touch", () => {
  // Written only while no first_utm_source cookie is held (its cookies last a year): track.ts.
  test("a first visit with UTMs records them", () => {
    assert.deepEqual(firstTouch(AD_TOUCH, "https://m.facebook.com/", "shop.example.com"), AD_TOUCH);
  });

  test("a first visit without UTMs: the referrer's host and referral, or direct and none", () => {
    assert.deepEqual(firstTouch({}, "https://www.google.com/search?q=x", "shop.example.com"), {
      utm_source: "www.google.com",
      utm_medium: "referral",
    });
    assert.deepEqual(firstTouch({}, "", "shop.example.com"), { utm_source: "direct", utm_medium: "none" });
    // A medium without a source would leave no first_utm_source, and the next page would overwrite it.
    assert.deepEqual(firstTouch({ utm_medium: "email" }, "", "shop.example.com"), {
      utm_source: "direct",
      utm_medium: "none",
    });
    assert.deepEqual(firstTouch({ gclid: "x" }, "https://shop.example.com/a", "shop.example.com"), {
      utm_source: "direct",
      utm_medium: "none",
    });
  });
});

describe("tracker core: cookie domain candidates", () => {
  test("from two labels outward, at most 8; none for localhost or a single label", () => {
    assert.deepEqual(cookieDomains("www.shop.example.co.uk"), [
      "co.uk",
      "example.co.uk",
      "shop.example.co.uk",
      "www.shop.example.co.uk",
    ]);
    assert.deepEqual(cookieDomains("x.github.io"), ["github.io", "x.github.io"]);
    assert.deepEqual(cookieDomains("example.com"), ["example.com"]);
    assert.deepEqual(cookieDomains("localhost"), []);
    assert.deepEqual(cookieDomains("intranet"), []);
    // The browser refuses an IP address's partial candidates and keeps the whole one host-only.
    assert.deepEqual(cookieDomains("127.0.0.1"), ["0.1", "0.0.1", "127.0.0.1"]);
    assert.deepEqual(cookieDomains("[::1]"), []);
    const deep = cookieDomains("a.b.c.d.e.f.g.h.i.j.example.com");
    assert.equal(deep.length, 8);
    assert.equal(deep[0], "example.com");
  });
});

describe("tracker core: decoration and vendor messages", () => {
  const fields = { utm_source: "facebook", utm_campaign: "Spring launch", utm_ad_id: "3" };

  test("a parameter is replaced, never repeated; Typeform takes them in the hash", () => {
    assert.equal(
      decorate(
        "https://calendly.com/acme/30min?utm_source=site&month=2026-05",
        fields,
        "https://example.com/",
      ),
      "https://calendly.com/acme/30min?utm_source=facebook&month=2026-05&utm_campaign=Spring+launch&utm_ad_id=3",
    );
    assert.equal(
      decorate(
        "https://form.typeform.com/to/abc?typeform-embed=x#email=a%40b.c&utm_source=old",
        fields,
        "https://e.com/",
      ),
      "https://form.typeform.com/to/abc?typeform-embed=x#email=a%40b.c&utm_source=facebook&utm_campaign=Spring+launch&utm_ad_id=3",
    );
    const once = decorate("https://tally.so/r/abc", fields, "https://e.com/");
    assert.equal(decorate(once, fields, "https://e.com/"), once);
  });

  test("the message shapes of TRACKING §2, as objects, JSON strings and arrays, each from its vendor's host", () => {
    const kind = (host: string, data: unknown) => classify(textOf(data), VENDORS[vendorOf(host) as string]);
    assert.equal(kind("calendly.com", { event: "calendly.event_scheduled", payload: {} }), "booking");
    assert.equal(kind("calendly.com", { event: "calendly.date_and_time_selected" }), undefined);
    assert.equal(kind("app.cal.com", { type: "bookingSuccessfulV2", data: { uid: "x" } }), "booking");
    assert.equal(kind("app.cal.com", { type: "bookingSuccessful", data: {} }), "booking");
    assert.equal(kind("app.cal.com", { type: "rescheduleBookingSuccessfulV2" }), "booking");
    assert.equal(kind("app.cal.com", { type: "dryRunBookingSuccessfulV2" }), undefined);
    assert.equal(kind("form.typeform.com", { type: "form-submit", responseId: "r" }), "form_submit");
    assert.equal(kind("form.typeform.com", { type: "form-ready" }), undefined);
    assert.equal(
      kind("tally.so", JSON.stringify({ event: "Tally.FormSubmitted", payload: { formId: "f" } })),
      "form_submit",
    );
    assert.equal(kind("form.jotform.com", { action: "submission-completed", formID: "1" }), "form_submit");
    assert.equal(kind("embed.fillout.com", { type: "form_submit", submissionUuid: "u" }), "form_submit");
    const contact = ["set-sticky-contacts", "_ud", '{"email":"a@b.co"}', "loc", "sub"];
    assert.equal(kind("api.leadconnectorhq.com", contact), "form_submit");
    assert.equal(kind("link.msgsndr.com", ["set-sticky-contacts", "embedded_iframe_x", "{}"]), undefined);
    assert.equal(kind("link.msgsndr.com", ["msgsndr-booking-complete", { calendarId: "c" }]), "booking");
    assert.equal(kind("go.oncehub.com", { type: "oncehub.booking.scheduled", payload: {} }), "booking");
    assert.equal(kind("go.oncehub.com", { type: "oncehub.form.completed" }), "form_submit");
    // Another vendor's shape, a look-alike host, an unknown host: nothing.
    assert.equal(kind("form.typeform.com", { event: "calendly.event_scheduled" }), undefined);
    assert.equal(kind("calendly.com.evil.example", { event: "calendly.event_scheduled" }), undefined);
    assert.equal(kind("evilcalendly.com", { event: "calendly.event_scheduled" }), undefined);
    assert.equal(kind("savvycal.com", { event: "calendly.event_scheduled" }), undefined);
    // HubSpot's callbacks are read from the page itself.
    assert.equal(
      classify(textOf({ type: "hsFormCallback", eventName: "onFormSubmitted" }), HUBSPOT),
      "form_submit",
    );
    assert.equal(classify(textOf({ type: "hsFormCallback", eventName: "onFormReady" }), HUBSPOT), undefined);
    for (const noise of ["[iFrameSizer]frame:300", "setHeight:420", "{not json", null, 7, undefined, []])
      assert.equal(kind("calendly.com", noise), undefined, String(noise));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(textOf(cyclic), "");
  });

  test("a Calendly iframe's address gets embed_domain once; other tools' do not", () => {
    const base = "https://shop.example.com/";
    assert.equal(
      decorate("https://calendly.com/acme/intro", {}, base, "shop.example.com"),
      "https://calendly.com/acme/intro?embed_domain=shop.example.com",
    );
    assert.equal(
      decorate("https://calendly.com/acme/intro?embed_domain=x.com", {}, base, "shop.example.com"),
      "https://calendly.com/acme/intro?embed_domain=x.com",
    );
    assert.equal(decorate("https://tally.so/r/abc", {}, base, "shop.example.com"), "https://tally.so/r/abc");
    // A link (no embed host given) is not an embed.
    assert.equal(decorate("https://calendly.com/acme/intro", {}, base), "https://calendly.com/acme/intro");
  });

  test("thank-you paths: whole segments of thank-you words, booking words make a booking", () => {
    for (const path of [
      "/thank-you",
      "/thanks",
      "/merci",
      "/danke/",
      "/confirmation",
      "/en/thank_you.html",
      "/lp//#/thanks",
      "/order-confirmed",
      "/form-success",
    ])
      assert.equal(thanksKind(path), "form_submit", path);
    for (const path of [
      "/call-booked",
      "/thank-you-for-booking",
      "/booking-confirmed",
      "/demo-scheduled",
      "/x/#/appointment-confirmed",
    ])
      assert.equal(thanksKind(path), "booking", path);
    for (const path of [
      "/blog/thank-you-notes",
      "/success-stories",
      "/confirm-your-plan",
      "/pricing",
      "/",
      "/x/#pricing",
    ])
      assert.equal(thanksKind(path), undefined, path);
  });

  test("unresolved macros, raw or encoded once or twice, are no value: never stored, never over a good one", () => {
    for (const value of [
      "{{ad.name}}",
      "{campaignid}",
      "__CAMPAIGN_NAME__",
      "{{adset.id}}",
      "%7B%7Bad.name%7D%7D",
      "[ad_id]",
      "%%AD_ID%%",
    ])
      assert.equal(isMacro(value), true, value);
    for (const value of ["Spring", "Promo {spring} video", "[Spring sale]", "50%", "120210000000003"])
      assert.equal(isMacro(value), false, value);
    // In a landing URL: raw, encoded once, encoded twice.
    const touch = parseTouch(
      "?utm_source=facebook&utm_medium=paid&utm_campaign={{campaign.name}}&utm_content=%7B%7Bad.name%7D%7D" +
        "&utm_term=%257B%257Badset.name%257D%257D&utm_adset_id={{adset.id}}&utm_ad_id=120210000000003",
    );
    const fresh = merge(undefined, touch, T0);
    assert.deepEqual(fresh.l, { utm_source: "facebook", utm_medium: "paid", utm_ad_id: "120210000000003" });
    assert.deepEqual(firstTouch(touch, "", "shop.example.com"), {
      utm_source: "facebook",
      utm_medium: "paid",
      utm_ad_id: "120210000000003",
    });
    // After a good ad click, the same ad with macros keeps the good values.
    const good = merge(undefined, parseTouch(AD_QUERY), T0);
    const again = merge(good, touch, T0 + 1000);
    assert.equal(again.l.utm_campaign, "Spring");
    assert.equal(again.l.utm_content, "Video 3");
    assert.equal(again.l.utm_adset_id, "120210000000002");
  });

  test("contacts: a request body's email and phone (JSON, form-encoded); a form's fields", () => {
    assert.deepEqual(contactIn(textOf(["set-sticky-contacts", "_ud", '{"email":"Lead@Example.com"}'])), {
      email: "Lead@Example.com",
      phone: undefined,
    });
    assert.deepEqual(contactIn('{"name":"Jo","phone":"+44 20 7946 0000","consent":true}'), {
      email: undefined,
      phone: "+44 20 7946 0000",
    });
    assert.deepEqual(
      contactIn("firstname=Jo&email=jo.doe%2Bads%40mail.example.co.uk&mobile_phone=%2B33+6+12+34+56+78"),
      {
        email: "jo.doe+ads@mail.example.co.uk",
        phone: "+33+6+12+34+56+78",
      },
    );
    assert.equal(contactIn('{"event":"page","ts":1764151200000}'), undefined);
    assert.deepEqual(
      contactOf([
        { name: "first_name", type: "text", value: " Jo " },
        { name: "your-email", type: "email", value: "jo@example.com" },
        { name: "contact_number", type: "tel", value: "+33 6 12 34 56 78" },
        { name: "password", type: "password", value: "hunter2" },
        { name: "contact", type: "text", value: "second@example.com" },
      ]),
      { email: "jo@example.com", phone: "+33 6 12 34 56 78" },
    );
    // Found by its value in a plain text field; a blank phone is none.
    assert.deepEqual(
      contactOf([
        { name: "phone", type: "tel", value: "  " },
        { name: "q", type: "text", value: "lead@example.org" },
      ]),
      { email: "lead@example.org", phone: undefined },
    );
  });
});
