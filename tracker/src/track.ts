/**
 * track.js (SPEC "Tracking script behavior"; TRACKING.md, the tracking field notes): captures the
 * ad and UTM parameters, keeps the attribution in a cookie on the registrable domain, fills hidden
 * fields, decorates booking and form tools, reports page views and submissions, honours consent.
 * Built by src/tracking/track-script.ts in two variants. The served one must stay under 5,000 bytes
 * minified, so browser state lives in closure variables (minified to one letter) rather than
 * objects and the service sorts the parameters it sends (`params`); even so, not everything fits:
 * `TRACK_FULL` (false there, true in the full variant) adds submission method 4 (fetch and XHR
 * posts), page views of a single-page app's routes, booking thank-you paths, the beacons' fetch
 * fallback, and decoration of hosts listed in `data-decorate` and of elements marked with it.
 */
import {
  type Contact,
  classify,
  contactOf,
  cookieDomains,
  decorate,
  emailIn,
  firstTouch,
  type Kind,
  merge,
  parseTouch,
  type State,
  type Touch,
  textOf,
  UTM,
  VENDORS,
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

/** Replaced at build time: the full variant's extras (above). */
declare const TRACK_FULL: boolean;

const w = window;
const d = document;
const loc = location;
const now = Date.now;
const json = JSON.stringify;
const STATE_COOKIE = "_ascribe";
/** The five standard cookies (`utm_source`…), and the first touch's (`first_utm_source`…). */
const STANDARD = UTM.slice(0, 5);
/** Thank-you paths and success messages. */
const THANKS = /thank|merci|danke|gracias|obrigad|success|confirm/i;
const anchor = d.createElement("a");

/** Every listener in the capture phase: a page's handler that stops propagation cannot hide an event. */
const listen = (target: EventTarget, type: string, listener: (e: Event) => void) =>
  target.addEventListener(type, listener, true);
const inputs = (root: ParentNode) => root.querySelectorAll("input");
/** A URL's host, resolved against the page as a link's would be (never throws). */
const hostOf = (url: string) => {
  anchor.href = url;
  return anchor.host;
};

// Included twice, the second copy does nothing.
if (!w.__ascribe) {
  w.__ascribe = 1;
  const script = d.currentScript as HTMLScriptElement | null;
  const config = script?.dataset || {};
  // Beacons go back where the script came from: on a first-party host, that host.
  const endpoint = new URL("/api/collect", script?.src || loc.href).href;
  // Without the attribute, `concat` adds `undefined`, which no host ends with.
  const hosts = TRACK_FULL ? VENDORS.concat(config.decorate?.match(/[^\s,]+/g) as string[]) : VENDORS;
  // Captured now, kept in memory: a consent given later on this page still attributes the visit.
  const landing = parseTouch(loc.search);
  // The page's own fetch: the beacons' fallback must not count as a submission (method 4).
  const pageFetch = w.fetch;

  let on: boolean | undefined;
  let state: State | undefined;
  /** The registrable domain once probed, and the attributes every cookie is written with. */
  let domain: string | undefined;
  let attributes = `;path=/;SameSite=Lax${loc.protocol == "https:" ? ";Secure" : ""}`;
  /** TCF's verdict: 0 (a decline) until the CMP answers. */
  let tcf: number | undefined;
  /** The box around the form where the visitor typed an email, and the form's contact (method 5). */
  let armed: HTMLElement | 0 | undefined;
  let typed: Contact | undefined;
  let page = loc.pathname + loc.search;
  let lastUrl = loc.href;

  const listed = (host: string) => hosts.some((h) => `.${host}`.endsWith(`.${h}`));
  /** A cookie's raw value (another script's `first_utm_*` may not decode). */
  const cookie = (name: string) => d.cookie.match(`(?:^|; )${name}=([^;]*)`)?.[1];
  /** Sets (without a value, expires) a cookie. */
  const setCookie = (name: string, value: string | undefined, maxAge: number) =>
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
    (d.cookie = `${name}=${encodeURIComponent(value as string)};max-age=${value ? maxAge : 0}${attributes}`);

  /**
   * Consent (TRACKING §4): GPC, TCF (storage and ad measurement, purposes 1 and 7; nothing until the
   * CMP answers), Consent Mode's last `analytics_storage`, Cookiebot's `statistics` (`-1`: outside
   * the consent region), OneTrust's performance group C0002. Any decline wins; then a grant, or no
   * signal at all unless the tag asks for opt-in.
   */
  const update = () => {
    if (tcf == null && w.__tcfapi) {
      tcf = 0;
      w.__tcfapi("addEventListener", 2, (data, ok) => {
        if (ok) tcf = +(data.gdprApplies == false || [1, 7].every((i) => data.purpose?.consents?.[i]));
      });
    }
    let gcm: unknown;
    for (const item of w.dataLayer || [])
      if (item?.[0] == "consent") gcm = (item[2] as { analytics_storage?: string })?.analytics_storage || gcm;
    // OneTrust's group reads `C0002%3A1`: its verdict follows an `A`.
    const signals = `${navigator.globalPrivacyControl ? 0 : ""} ${tcf} ${gcm} ${d.cookie.match(
      /statistics:\w+|C0002%3A\d|CookieConsent=-1/g,
    )}`;
    on =
      !/\b(0|false|denied)\b|A0/.test(signals) &&
      (/\b(1|true|granted)\b|A1/.test(signals) || config.consent != "required");
    if (on && !state) start();
  };

  /** Saves the state and sends a beacon, consent checked once more. */
  const send = (type: Kind | "page_view", params: Touch, contact?: Contact, referrer?: string) => {
    update();
    if (on && state) {
      setCookie(STATE_COOKIE, json(state), 2592e3);
      for (const k of STANDARD) setCookie(k, state.l[k], 2592e3);
      const body = json({
        type,
        client_key: config.client,
        visitor_id: state.v,
        session_id: state.s,
        url: loc.href,
        params,
        contact,
        referrer,
      });
      // A string body is text/plain: no CORS preflight. Sent now, never deferred to pagehide.
      if (!navigator.sendBeacon(endpoint, body) && TRACK_FULL)
        pageFetch(endpoint, { method: "POST", body, keepalive: true });
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

  /**
   * Fills hidden fields (and empty ones) by their exact names (`utm_source`, `gclid`…);
   * decorates links, iframes and embeds of listed tools, and elements marked `data-decorate`.
   */
  const scan = (root: Element) => {
    const values = state?.l || {};
    // Once per element and state (marked with the state it saw): while the page is parsed, every
    // element is reported as added, and with it the subtree of each ancestor reported in the batch.
    for (const e of [
      root,
      ...root.querySelectorAll("a,iframe,input,[data-url],[data-tally-src]"),
    ] as (HTMLInputElement & Record<string, unknown>)[])
      if (e[STATE_COOKIE] != state) {
        e[STATE_COOKIE] = state;
        // Links and iframes have no `utm_*` names: the fill touches only inputs.
        const v = values[e.name];
        if (v && (e.type == "hidden" || !e.value)) e.value = v;
        if (values.utm_source)
          for (const name of ["href", "src", "data-url", "data-tally-src"]) {
            const url = e.getAttribute(name);
            if (url && (listed(hostOf(url)) || (TRACK_FULL && e.hasAttribute("data-decorate")))) {
              const next = decorate(url, values, loc.href);
              // Only a change: setting an iframe's src again reloads it.
              if (next != url) e.setAttribute(name, next);
            }
          }
      }
  };

  /**
   * On a DOM change and every second: a new route of a single-page app (pushState, replaceState,
   * popstate and hashchange all re-render) is a page view; the box of a form where an email was typed
   * now saying "thank you" is a conversion (method 5); so is a thank-you path (method 6).
   */
  const route = () => {
    if (TRACK_FULL) {
      const current = loc.pathname + loc.search;
      if (current != page) {
        const touch = parseTouch(loc.search);
        if (state) {
          state = merge(state, touch, now());
          send("page_view", touch, undefined, lastUrl);
        }
        page = current;
      }
      lastUrl = loc.href;
    }
    // biome-ignore lint/performance/useDomNodeTextContent: the text shown, not a hidden success message.
    if (armed && THANKS.test(armed.innerText)) convert("form_submit", typed);
    const path = loc.pathname + loc.hash;
    if (THANKS.test(path))
      convert(TRACK_FULL && /book|schedul|appointment/i.test(path) ? "booking" : "form_submit", typed, path);
  };

  /** At the first grant (at once without a consent signal): probe, cookies, page view, page scan. */
  const start = () => {
    // The first candidate the browser accepts (TRACKING §3); the probe expires within a second.
    const probe = `${STATE_COOKIE}${now()}=`;
    for (const c of cookieDomains(loc.hostname)) {
      // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
      d.cookie = `${probe}1;max-age=1;domain=${c}`;
      if (d.cookie.includes(probe)) {
        attributes += `;domain=${(domain = c)}`;
        break;
      }
    }
    // Written once, for a year: the cookies' own expiry ends the first touch.
    if (!cookie("first_utm_source")) {
      const first = firstTouch(landing, d.referrer, loc.host);
      for (const k of STANDARD) setCookie(`first_${k}`, first[k], 31536e3);
    }
    let prev: unknown;
    try {
      prev = JSON.parse(decodeURIComponent(cookie(STATE_COOKIE) as string));
    } catch {}
    state = merge(prev, landing, now());
    // A thank-you path first: its key is then saved with the page view's state.
    route();
    send("page_view", landing, undefined, d.referrer);
    scan(d.documentElement);
  };

  // 1. Native submit, valid forms only, and not a search box (no email, not a POST).
  listen(d, "submit", (e) => {
    const form = e.target as HTMLFormElement;
    const contact = contactOf(inputs(form));
    if ((form.noValidate || form.checkValidity()) && (contact.email || /post/i.test(form.method)))
      convert("form_submit", contact);
  });

  // 2 and 3. Form and scheduling tools: a known message from one of the page's iframes on a listed
  // host, or from this window and origin (HubSpot). Other messages are not even read.
  listen(w, "message", (e) => {
    const { source, origin, data } = e as MessageEvent;
    // A frame's parent is readable across origins: it is this window for this page's own iframes.
    const text =
      (source == w ? origin == loc.origin : (source as Window)?.parent == w && listed(hostOf(origin))) &&
      textOf(data);
    const kind = classify(text || "");
    if (kind) convert(kind, { email: emailIn(text as string) });
  });

  // 4. fetch and XHR sends with a body (so not a GET) holding an email, answered with success by
  // this site or a listed tool: a lead.
  if (TRACK_FULL) {
    const answered = (body: unknown, url: string) => {
      const email = emailIn(
        `${typeof body == "object" ? new URLSearchParams(body as never) : body}`.replace(/%40/g, "@"),
      );
      const host = hostOf(url);
      if (email && (`.${host}`.endsWith(`.${domain || loc.host}`) || listed(host)))
        convert("form_submit", { email });
    };
    w.fetch = (input, init) => {
      const response = pageFetch(input, init);
      response.then(
        (r) => r.ok && answered(init?.body, r.url),
        () => {},
      );
      return response;
    };
    const xhrSend = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (this: XMLHttpRequest, body) {
      listen(this, "load", () => this.status < 300 && answered(body, this.responseURL));
      xhrSend.call(this, body);
    };
  }

  // 5. An email typed in a form whose box does not say "thank you" yet arms the check in route().
  listen(d, "input", (e) => {
    const form = (e.target as HTMLInputElement).form;
    const box = form?.parentElement || d.body;
    typed = contactOf(inputs(form || d.body));
    // biome-ignore lint/performance/useDomNodeTextContent: the text shown, not a hidden success message.
    if (typed.email && !THANKS.test(box.innerText)) armed = box;
  });

  // Forms, links and embeds added later, filled and decorated before an iframe loads.
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) if (n instanceof Element) scan(n);
    route();
  }).observe(d.documentElement, { childList: true, subtree: true });

  // CMPs answer later and set their cookies on the visitor's click; a route may change without a
  // DOM change: both are read again every second.
  setInterval(() => {
    update();
    route();
  }, 1e3);
  update();
}
