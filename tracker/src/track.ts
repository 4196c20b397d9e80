/**
 * track.js (SPEC "Tracking script behavior"; TRACKING.md, the tracking field notes): captures the
 * ad and UTM parameters, keeps the attribution in a cookie on the registrable domain, fills hidden
 * fields, decorates booking and form tools, reports page views and submissions, honours consent.
 * Built by src/tracking/track-script.ts and served gzip under 4,100 bytes, so browser state lives in
 * closure variables (minified to one letter) rather than objects, and the service sorts the
 * parameters it sends (`params`).
 *
 * Cheap at page load: nothing runs while the page is parsed but its evaluation; at DOMContentLoaded
 * (when a consent manager placed anywhere in the page has defined itself) it decides consent, writes
 * the cookies, sends the page view and decorates embed attributes; fields and iframes are done once
 * the page has loaded, in an idle moment; later additions as a MutationObserver sees them; links when
 * pressed.
 */
import {
  beaconId,
  type Contact,
  classify,
  contactIn,
  contactOf,
  cookieDomains,
  decode,
  decorate,
  firstTouch,
  HUBSPOT,
  type Kind,
  merge,
  parseTouch,
  type State,
  THANKS,
  type Touch,
  textOf,
  thanksKind,
  UTM,
  VENDORS,
  vendorOf,
  within,
} from "./core.ts";

interface TcfData {
  gdprApplies?: boolean;
  purpose?: { consents?: Record<number, boolean> };
}

declare global {
  interface Window {
    __ascribe?: number;
    dataLayer?: ArrayLike<unknown>[];
    __tcfapi?: (command: string, version: number, callback: (data: TcfData, ok: boolean) => void) => void;
  }
  interface Navigator {
    globalPrivacyControl?: boolean;
  }
}

type Marked = HTMLInputElement & Record<string, unknown>;

const w = window;
const d = document;
const loc = location;
const now = Date.now;
const json = JSON.stringify;
const STATE_COOKIE = "_ascribe";
/** The five standard cookies (`utm_source`…), and the first touch's (`first_utm_source`…). */
const STANDARD = UTM.slice(0, 5);
const FIRST = STANDARD.map((k) => `first_${k}`);
/** Success text in the box of a form where an email or phone was typed (method 5). */
const THANKS_TEXT = RegExp(THANKS, "i");
/**
 * Success blocks shown in place of a form: HubSpot's (legacy forms rendered in the page) and Webflow's,
 * which its script reveals with an inline `display: block`.
 */
const SUCCESS_BLOCKS = ".submitted-message,.w-form-done[style*=block]";
const noop = () => {};

/** Every listener in the capture phase: a page's handler that stops propagation cannot hide an event. */
const listen = (target: EventTarget, type: string, listener: (e: Event) => void) =>
  target.addEventListener(type, listener, true);
/** A URL's host, resolved against the page as a link's would be (never throws). */
const hostOf = (url: string) => {
  try {
    return new URL(url, loc.href).host;
  } catch {
    return "";
  }
};
/** The tracked parameters of the address: its query, and a hash route's (`#/lp?utm_source=…`). */
const touchOfPage = () => parseTouch(`${loc.search}&${loc.hash.split("?")[1]}`);
/** A page of a single-page app: path, query and hash route (`#/pricing`; not an in-page `#anchor`). */
const pageKey = () => loc.pathname + loc.search + (/^#!?\//.test(loc.hash) ? loc.hash : "");
const { set: valueSetter } = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value") as {
  set(this: HTMLInputElement, value: string): void;
};

// Included twice, the second copy does nothing.
if (!w.__ascribe) {
  w.__ascribe = 1;
  const script = d.currentScript as HTMLScriptElement | null;
  const config = script?.dataset || {};
  // Beacons go back where the script came from: on a first-party host, that host.
  const endpoint = new URL("/api/collect", script?.src || loc.href).href;
  // Hosts the tag adds to the vendors' for decoration (`data-decorate="forms.acme.io, …"`).
  for (const host of `${config.decorate}`.split(/[\s,]+/)) VENDORS[host] = 0;
  // Captured now, kept in memory: a consent given later on this page still attributes the visit.
  const landing = touchOfPage();
  // The page's own fetch and form.submit: the beacons' fallback must not count as a submission.
  const pageFetch = w.fetch;
  const forms = HTMLFormElement.prototype;
  const formSubmit = forms.submit;
  const xhr = XMLHttpRequest.prototype;
  const xhrSend = xhr.send;

  let on: boolean | undefined;
  let state: State | undefined;
  /** The registrable domain once probed, and the attributes every cookie is written with. */
  let domain: string | undefined;
  let attributes = `;path=/;SameSite=Lax${loc.protocol == "https:" ? ";Secure" : ""}`;
  /** TCF's verdict: 0 (a decline) until the CMP answers. */
  let tcf: number | undefined;
  /** The box around the form where the visitor typed an email, and what they typed (method 5). */
  let armed: HTMLElement | 0 | undefined;
  let typed: Contact | undefined;
  /** The page's cookies as last read. */
  let jar = "";
  let page = pageKey();
  let lastUrl = loc.href;

  /**
   * A cookie's raw value (another script's `first_utm_*` may not decode), from the page's cookies as
   * last read: reading `document.cookie` asks the browser process each time, writing it does not wait.
   */
  const cookie = (name: string) => `; ${jar}`.split(`; ${name}=`)[1]?.split(";")[0];
  /** Writes a cookie, or expires it (without a value). */
  const setCookie = (name: string, value: string | undefined, maxAge: number) => {
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
    d.cookie = `${name}=${encodeURIComponent(value || "")};max-age=${value ? maxAge : 0}${attributes}`;
  };

  /**
   * Consent (TRACKING §4): GPC, TCF (storage and ad measurement, purposes 1 and 7; nothing until the
   * CMP answers), Consent Mode's last `analytics_storage`, Cookiebot's `statistics` (`-1`: outside
   * the consent region), OneTrust's performance group C0002. Any decline wins; then a grant, or no
   * signal at all unless the tag asks for opt-in. Nothing starts before the page is parsed, so that a
   * CMP's stub placed after this script is heard first; but a submission or booking (`now`) does.
   */
  const update = (now?: unknown) => {
    jar = d.cookie;
    if (tcf == null && w.__tcfapi) {
      tcf = 0;
      w.__tcfapi("addEventListener", 2, (data, ok) => {
        if (ok) tcf = +(data.gdprApplies == false || [1, 7].every((i) => data.purpose?.consents?.[i]));
        update();
      });
    }
    let gcm: unknown;
    for (const item of w.dataLayer || [])
      if (item?.[0] == "consent") gcm = (item[2] as { analytics_storage?: string })?.analytics_storage || gcm;
    // OneTrust's group reads `C0002%3A1`: its verdict follows an `A`.
    const signals = `${navigator.globalPrivacyControl ? 0 : ""} ${tcf} ${gcm} ${jar.match(
      /statistics:\w+|C0002%3A\d|CookieConsent=-1/g,
    )}`;
    on =
      !/\b(0|false|denied)\b|A0/.test(signals) &&
      (/\b(1|true|granted)\b|A1/.test(signals) || config.consent != "required");
    if (on && !state && (now || d.readyState != "loading")) start();
  };

  /** Saves the state and sends a beacon, with consent. */
  const send = (type: Kind | "page_view", params: Touch, contact?: Contact, referrer?: string) => {
    if (on && state) {
      setCookie(STATE_COOKIE, json(state), 2592e3);
      for (const k of STANDARD) setCookie(k, state.l[k], 2592e3);
      const body = json({
        type,
        id: beaconId(),
        client_key: config.client,
        visitor_id: state.v,
        session_id: state.s,
        url: loc.href,
        params,
        contact,
        referrer,
      });
      // A string body is text/plain: no CORS preflight. Sent now (a page may leave right after),
      // never deferred to pagehide; the fallback is the page's own fetch, which method 4 never sees.
      navigator.sendBeacon(endpoint, body) ||
        pageFetch(endpoint, { method: "POST", body, keepalive: true }).catch(noop);
    }
  };

  /**
   * One beacon per submission: signals of one kind within 30 s are one; a thank-you path (its `key`)
   * after any signal within 30 s (a booking that redirects to it) adds nothing, and counts once in
   * 30 minutes (the key is saved with the state: a reload is not a second lead).
   */
  const convert = (kind: Kind, contact?: Contact, key?: string) => {
    const at = now();
    // No conversion yet: `at - undefined` is NaN, never under 30 s.
    const since = at - (state?.c as number);
    // Consent read once more (a visitor may have withdrawn it since the last second's check); a
    // signal while the page is still parsed starts the script now, with the consent known so far.
    update(1);
    if (state && !(key && key == state.k && since < 18e5)) {
      if (key) state.k = key;
      if (!(since < 3e4 && (key || state.y == kind))) {
        armed = 0;
        state.c = at;
        state.y = kind;
        send(kind, { ...state.l, utm_channel: state.a }, contact);
      }
    }
  };

  /** What fields and tool addresses receive: the attribution, and the account's client key. */
  const values = (): Touch => ({ ...state?.l, client_key: config.client });

  /**
   * Decorates an element's addresses of listed tools (or any, on an element marked `data-decorate`);
   * a Calendly iframe also gets its `embed_domain`. Only a change is written: setting an iframe's
   * src again reloads it.
   */
  const decorateElement = (e: Element) => {
    for (const name of ["href", "src", "data-url", "data-tally-src"]) {
      const url = e.getAttribute(name);
      if (url && (vendorOf(hostOf(url)) || e.hasAttribute("data-decorate"))) {
        const next = decorate(url, values(), loc.href, e.tagName == "IFRAME" && loc.hostname);
        if (next != url) e.setAttribute(name, next);
      }
    }
  };

  /**
   * Fills fields by their exact names (`utm_source`, `gclid`, `client_key`…) unless they hold a value
   * of their own, through the native setter and with `input` and `change` events, so that React's or
   * Vue's state holds the value too; decorates iframes and embeds. Again on the same elements it
   * changes nothing: a field keeps the value it was given, an address its parameters.
   */
  const scan = (root: Element) => {
    const all = values();
    for (const e of [
      root,
      ...root.querySelectorAll("input,iframe,[data-url],[data-tally-src]"),
    ] as Marked[]) {
      const v = all[e.name];
      if (e.tagName != "INPUT") decorateElement(e);
      // Marked with the value it was given: a value of the field's own is never replaced.
      else if (v && (!e.value || e.value == e[STATE_COOKIE])) {
        valueSetter.call(e, (e[STATE_COOKIE] = v));
        for (const type of ["input", "change"]) e.dispatchEvent(new Event(type, { bubbles: true }));
      }
    }
  };

  /**
   * A new route of a single-page app is a page view (its parameters merged); a thank-you path is a
   * conversion (method 6). Run at start, after pushState and replaceState, and on popstate (which a
   * hash change fires too).
   */
  const route = () => {
    const key = pageKey();
    if (state && key != page) {
      const touch = touchOfPage();
      state = merge(state, touch, now());
      send("page_view", pageParams(touch), undefined, lastUrl);
      scan(d.documentElement);
    }
    page = key;
    lastUrl = loc.href;
    const path = `${loc.pathname}/${loc.hash}`;
    const kind = thanksKind(path);
    if (kind) convert(kind, typed, path);
  };

  /** A page view's parameters: the page's own; an assist (`utm_channel`) carries the attribution it assists. */
  const pageParams = (touch: Touch) => (touch.utm_channel ? { ...state?.l, ...touch } : touch);

  /** The box of a form where an email was typed shows a success message (method 5). */
  const thanked = (box: HTMLElement) =>
    // biome-ignore lint/performance/useDomNodeTextContent: the text shown, not a hidden success message.
    THANKS_TEXT.test(box.innerText) || box.querySelector(SUCCESS_BLOCKS);
  /**
   * Once started, forms and embeds added to the page are filled and decorated as they come; an armed
   * box that comes to say thank you is a conversion (method 5).
   */
  const watcher = new MutationObserver((records) => {
    if (state) for (const r of records) for (const n of r.addedNodes) if (n instanceof Element) scan(n);
    if (armed && thanked(armed)) convert("form_submit", typed);
  });

  /** At the first grant (without a consent signal, once the page is parsed): cookies, page view, scan. */
  const start = () => {
    let prev: State | undefined;
    const saved = cookie(STATE_COOKIE);
    // Checked first: a thrown error costs the page more than the check.
    if (saved)
      try {
        prev = JSON.parse(decode(saved));
      } catch {}
    domain = prev?.d;
    // The first candidate the browser accepts (TRACKING §3); the probe expires within a second. On a
    // later page the state names the domain: no probe.
    const probe = `${STATE_COOKIE}${now()}=`;
    for (const c of domain ? [] : cookieDomains(loc.hostname)) {
      // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
      d.cookie = `${probe}1;max-age=1;domain=${c}`;
      if (d.cookie.includes(probe)) {
        domain = c;
        break;
      }
    }
    if (domain) attributes += `;domain=${domain}`;
    // Written once, for a year: the cookies' own expiry ends the first touch.
    if (!cookie(FIRST[0] as string)) {
      const first = firstTouch(landing, d.referrer, loc.host);
      for (const k of STANDARD) setCookie(`first_${k}`, first[k], 31536e3);
    }
    state = merge(prev, landing, now());
    state.d = domain;
    // A thank-you path first: its key is then saved with the page view's state.
    route();
    send("page_view", pageParams(landing), undefined, d.referrer);
    // Host-only cookies of the same names (an earlier script's, another tool's) expire, so that the
    // page reads one value: the registrable domain's. Expiring one that is not there changes nothing.
    if (domain && /utm_|_ascribe=/.test(jar))
      for (const k of [STATE_COOKIE, ...STANDARD, ...FIRST]) {
        // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
        d.cookie = `${k}=;max-age=0;path=/`;
      }
    // Embed attributes now, before the tools' scripts read them; the page's iframes (reloaded by a
    // new address) and fields once the page has loaded, in an idle moment; links when clicked.
    for (const e of d.querySelectorAll("[data-url],[data-tally-src]")) decorateElement(e);
    const idle = () => (w.requestIdleCallback || setTimeout)(() => scan(d.documentElement));
    if (d.readyState == "complete") idle();
    else listen(w, "load", idle);
    // Forms and embeds added later, filled and decorated as they come.
    watcher.observe(d.documentElement, { childList: true, subtree: true });
  };

  /** A form's submission with its contact: a lead when it has an email or is a POST (not a search box). */
  const submitted = (form: HTMLFormElement) => {
    const contact = contactOf(form.elements as unknown as Marked[]);
    if (contact || /post/i.test(form.method)) convert("form_submit", contact);
  };

  /** A request body's text: a string's, form data's (its files named, not read); never a stream's or a file's. */
  const bodyText = (body: unknown) =>
    `${body instanceof FormData ? new URLSearchParams(body as never) : body}`;

  /** A request answered 2xx by this site or a listed tool: a lead if its body holds a contact. */
  const lead = (body: string | false | Promise<string> | undefined, url: string) => {
    const host = hostOf(url);
    if (within(host, domain || loc.host) || vendorOf(host))
      Promise.resolve(body).then((text) => {
        const contact = contactIn(`${text}`);
        if (contact) convert("form_submit", contact);
      }, noop);
  };

  // 1. Native submit (requestSubmit, a button outside the form, a double click: one), valid forms
  // only; form.submit(), which fires no event, too.
  listen(d, "submit", (e) => {
    const form = e.target as HTMLFormElement;
    // Filled now if the idle moment has not come yet: the form's data is read after this event.
    if (state) scan(form);
    if (form.noValidate || form.checkValidity()) submitted(form);
  });
  forms.submit = function (this: HTMLFormElement) {
    submitted(this);
    formSubmit.call(this);
  };

  // 2 and 3. Form and scheduling tools: the vendor's own message from one of the page's iframes on
  // that vendor's host; from this window, only HubSpot's callbacks. Other messages are not even read.
  listen(w, "message", (e) => {
    const { source, origin, data } = e as MessageEvent;
    const text = textOf(data);
    // A frame's parent is readable across origins: it is this window for this page's own iframes.
    const kind =
      source == w
        ? origin == loc.origin && classify(text, HUBSPOT)
        : (source as Window)?.parent == w && classify(text, VENDORS[vendorOf(hostOf(origin)) as string]);
    if (kind) convert(kind, contactIn(text));
  });
  // HubSpot's new forms tell the page, not the script.
  listen(w, "hs-form-event:on-submission:success", () => convert("form_submit", typed));

  // 4. fetch and XHR posts holding an email or a phone, answered 2xx. The page gets its own promise;
  // a body is read from a copy (a Request's clone, the text of the init's body), never a stream.
  w.fetch = (input, init) => {
    let body: string | false | Promise<string> | undefined;
    const request = input instanceof Request ? input : undefined;
    // A GET has no body (fetch refuses one): its text is empty.
    try {
      body = init?.body ? bodyText(init.body) : request?.clone().text();
    } catch {}
    const response = pageFetch(input, init);
    response.then((r) => r.ok && lead(body, request?.url || `${input}`), noop);
    return response;
  };
  xhr.send = function (this: XMLHttpRequest, body) {
    if (body) {
      const text = bodyText(body);
      listen(this, "load", () => (this.status / 100) >> 0 == 2 && lead(text, this.responseURL));
    }
    xhrSend.call(this, body);
  };

  // 5. An email or phone typed in a form whose box does not say "thank you" yet arms the box.
  listen(d, "input", (e) => {
    const form = (e.target as HTMLInputElement).form;
    const box = form?.parentElement || d.body;
    typed = contactOf((form?.elements || d.querySelectorAll("input")) as unknown as Marked[]);
    if (typed && box != armed && !thanked(box)) {
      armed = box;
      watcher.observe(box, { childList: true, subtree: true, attributes: true, characterData: true });
    }
  });

  // Links of listed tools get the attribution when pressed, before the browser follows them.
  for (const type of ["mousedown", "click"])
    listen(d, type, (e) => {
      const link = state && (e.target as Element).closest?.("a[href]");
      if (link) decorateElement(link);
    });

  // Routes of single-page apps.
  for (const method of ["pushState", "replaceState"] as const) {
    const original = history[method];
    history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
      original.apply(this, args);
      route();
    };
  }
  // A hash change is a navigation, with its popstate.
  listen(w, "popstate", route);

  // Consent managers answer late and set their cookies on the visitor's click: read again every second.
  setInterval(update, 1e3);
  if (d.readyState == "loading") listen(d, "DOMContentLoaded", update);
  else update();
}
