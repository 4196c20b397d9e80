/**
 * track.js (SPEC "Tracking script behavior"; TRACKING.md, the tracking field notes): captures the
 * ad and UTM parameters, keeps the attribution in a cookie on the registrable domain, fills hidden
 * fields, decorates booking and form tools, reports page views and submissions, honours consent.
 *
 * Built by src/tracking/track-script.ts in two variants. The served one must stay under 5,000 bytes
 * minified, and not everything fits: `TRACK_FULL` (false there, true in the full variant) adds
 * submission methods 4 (fetch and XHR posts) and 5 (a thank-you message in the page), the TCF
 * consent API, the contact's name and phone and the form's title, the `client_key` hidden field,
 * `data-url` and `data-tally-src` embeds, hosts listed in `data-decorate` and elements marked with
 * it, decoration at click time, booking thank-you paths, the beacons' fetch fallback, and the expiry
 * of host-only cookie duplicates.
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
  newId,
  parseTouch,
  type State,
  type Touch,
  textOf,
  touchFields,
  UTM,
  VENDORS,
} from "./core.ts";

/** Replaced at build time: the full variant's extras (see above), dropped from the served one. */
declare const TRACK_FULL: boolean;

interface TcfData {
  eventStatus: string;
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

const w = window;
const d = document;
const loc = location;
const now = Date.now;
const json = JSON.stringify;
const STATE_COOKIE = "_ascribe";
/** The five standard cookies, and the first touch's. */
const STANDARD = UTM.slice(0, 5);
/** Thank-you paths and success messages. */
const THANKS = /thank|merci|danke|gracias|obrigad|success|confirm/i;
const anchor = d.createElement("a");

/** Every listener in the capture phase: a page's handler that stops propagation cannot hide an event. */
const listen = (target: EventTarget, type: string, listener: (e: Event) => void) =>
  target.addEventListener(type, listener, true);
const all = (root: ParentNode, selector: string) => [...root.querySelectorAll(selector)];
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
  const hosts = TRACK_FULL
    ? VENDORS.concat((config.decorate || "").split(/[\s,]+/).filter(Boolean))
    : VENDORS;
  // Captured now, kept in memory: a consent given later on this page still attributes the visit.
  const landing = parseTouch(loc.search);

  let on = false;
  let state: State | undefined;
  let domain: string | undefined;
  /**
   * The full variant's state: TCF's verdict ("1" or "0"; "" until the CMP has answered); the box
   * around the form where the visitor typed an email (it did not say "thank you" yet) and the
   * form's contact; the page's own fetch, for the beacons' fallback once fetch is wrapped.
   */
  const full: { tcf?: string; armed?: HTMLElement; typed?: Contact; fetch?: typeof fetch } = {};
  let page = loc.pathname + loc.search;
  let lastUrl = loc.href;

  const listed = (host: string) => hosts.some((h) => `.${host}`.endsWith(`.${h}`));
  /** A cookie's raw value (another script's `first_utm_*` may not decode). */
  const cookie = (name: string) => d.cookie.match(`(?:^|; )${name}=([^;]*)`)?.[1];
  /** Sets (without a value, expires) a cookie on the registrable domain. */
  const setCookie = (name: string, value = "", maxAge = 0) => {
    // A host-only copy left by an earlier version would shadow the domain cookie, in no set order.
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
    if (TRACK_FULL && domain) d.cookie = `${name}=;path=/;max-age=0`;
    // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from Firefox and Safari.
    d.cookie = `${name}=${encodeURIComponent(value)};path=/;SameSite=Lax;max-age=${value ? maxAge : 0}${
      domain ? `;domain=${domain}` : ""
    }${loc.protocol === "https:" ? ";Secure" : ""}`;
  };

  /**
   * Consent (TRACKING §4): GPC, Consent Mode's last `analytics_storage`, Cookiebot's `statistics`
   * (`-1`: outside the consent region), OneTrust's performance group C0002, and in the full variant
   * TCF (storage and ad measurement, purposes 1 and 7). Any decline wins; then a grant, or no signal
   * at all unless the tag asks for opt-in.
   */
  const update = () => {
    if (TRACK_FULL && full.tcf === undefined && w.__tcfapi) {
      full.tcf = "";
      w.__tcfapi("addEventListener", 2, (data, ok) => {
        if (ok && data.eventStatus !== "cmpuishown")
          full.tcf =
            data.gdprApplies === false || [1, 7].every((i) => data.purpose?.consents?.[i]) ? "1" : "0";
      });
    }
    let gcm: unknown;
    for (const item of w.dataLayer || [])
      if (item?.[0] === "consent")
        gcm = (item[2] as { analytics_storage?: string })?.analytics_storage || gcm;
    const signals =
      `${navigator.globalPrivacyControl ? 0 : ""}${TRACK_FULL ? ` ${full.tcf}` : ""} ${gcm} ${d.cookie.match(
        /statistics:\w+|C0002%3A\d|CookieConsent=-1/g,
      )}`.replace(/%3A/g, ":");
    on =
      !/\b(0|false|denied)\b/.test(signals) &&
      (/\b(1|true|granted)\b/.test(signals) || config.consent !== "required");
    if (on && !state) start();
  };

  /** Saves the state and sends a beacon, consent checked once more. */
  const send = (type: Kind | "page_view", touch: Touch, extra: object) => {
    update();
    if (!on || !state) return;
    setCookie(STATE_COOKIE, json(state), 2592e3);
    for (const k of STANDARD) setCookie(`utm_${k}`, state.l[k], 2592e3);
    const body = json({
      type,
      client_key: config.client,
      id: newId(),
      visitor_id: state.v,
      session_id: state.s,
      url: loc.href,
      ...touchFields(touch),
      ...extra,
    });
    // A string body is text/plain: no CORS preflight. Sent now, never deferred to pagehide.
    if (!navigator.sendBeacon(endpoint, body) && TRACK_FULL)
      full.fetch?.(endpoint, { method: "POST", body, keepalive: true }).catch(() => {});
  };
  /**
   * One beacon per submission: signals of one kind within 30 s are one, and a thank-you path (its
   * `key`) counts once, even when the form's own signal came first (the key is saved with the state).
   */
  const convert = (kind: Kind, contact: Contact, key?: string, title?: string) => {
    const at = now();
    if (!state || (key && key === state.k)) return;
    if (key) state.k = key;
    // No conversion yet: `at - undefined` is NaN, never under 30 s.
    if (!(at - (state.c as number) < 3e4 && state.y === kind)) {
      if (TRACK_FULL) full.armed = undefined;
      state.c = at;
      state.y = kind;
      send(kind, { ...state.l, channel: state.a }, TRACK_FULL ? { contact, form: { title } } : { contact });
    }
  };
  /** A form's email (and in the full variant its name and phone). */
  const formContact = (form: Element): Contact =>
    TRACK_FULL
      ? contactOf(
          (all(form, "input") as HTMLInputElement[]).map((i): [string, string, string] => [
            i.name,
            i.type,
            i.value,
          ]),
        )
      : { email: emailIn((all(form, "input") as HTMLInputElement[]).map((i) => i.value).join(" ")) };

  /** Fills hidden fields by their exact names; decorates links, iframes and embeds of listed tools. */
  const scan = (root: Element) => {
    const fields: Touch = {};
    for (const k of UTM.slice(0, 8)) if (state?.l[k]) fields[`utm_${k}`] = state.l[k];
    if (on)
      for (const e of [
        root,
        ...all(root, TRACK_FULL ? "a,iframe,input,[data-url],[data-tally-src]" : "a,iframe,input"),
      ]) {
        if (e instanceof HTMLInputElement) {
          const v = TRACK_FULL && e.name === "client_key" ? config.client : fields[e.name];
          if (v && (e.type === "hidden" || !e.value)) e.value = v;
        } else if (fields.utm_source)
          for (const name of TRACK_FULL ? ["href", "src", "data-url", "data-tally-src"] : ["href", "src"]) {
            const url = e.getAttribute(name);
            if (url && (listed(hostOf(url)) || (TRACK_FULL && e.hasAttribute("data-decorate")))) {
              const next = decorate(url, fields, loc.href);
              // Only a change: setting an iframe's src again reloads it.
              if (next !== url) e.setAttribute(name, next);
            }
          }
      }
  };

  /**
   * On a DOM change and every second: a new route of a single-page app (pushState, replaceState,
   * popstate and hashchange all re-render) is a page view; a thank-you path is a conversion; and in
   * the full variant, the box of a form where an email was typed now saying "thank you" is one too.
   */
  const route = () => {
    const current = loc.pathname + loc.search;
    if (current !== page) {
      const touch = parseTouch(loc.search);
      if (state) {
        state = merge(state, touch, now());
        send("page_view", touch, { referrer: lastUrl });
      }
      page = current;
    }
    lastUrl = loc.href;
    // biome-ignore lint/performance/useDomNodeTextContent: the text shown, not a hidden success message.
    if (TRACK_FULL && full.armed && full.typed && THANKS.test(full.armed.innerText))
      convert("form_submit", full.typed);
    const path = loc.pathname + loc.hash;
    if (THANKS.test(path))
      convert(TRACK_FULL && /book|schedul|appointment/i.test(path) ? "booking" : "form_submit", {}, path);
  };

  /** At the first grant (at once without a consent signal): probe, cookies, page view, page scan. */
  const start = () => {
    const probe = `_ascribe_${now()}`;
    domain = config.cookieDomain;
    if (!domain)
      for (domain of cookieDomains(loc.hostname)) {
        setCookie(probe, "1", 9);
        if (d.cookie.includes(probe)) break;
        domain = undefined;
      }
    setCookie(probe);
    // Written once, for a year: the cookies' own expiry ends the first touch.
    const first = firstTouch(cookie("first_utm_source"), landing, d.referrer, loc.host);
    if (first) for (const k of STANDARD) setCookie(`first_utm_${k}`, first[k], 31536e3);
    let prev: unknown;
    try {
      prev = JSON.parse(decodeURIComponent(`${cookie(STATE_COOKIE)}`));
    } catch {}
    state = merge(prev, landing, now());
    // A thank-you path first: its key is then saved with the page view's state.
    route();
    send("page_view", landing, { referrer: d.referrer });
    scan(d.documentElement);
  };

  // 1. Native submit, valid forms only, and not a search box (no email, not a POST).
  listen(d, "submit", (e) => {
    const form = e.target as HTMLFormElement;
    const contact = formContact(form);
    if ((form.noValidate || form.checkValidity()) && (contact.email || /post/i.test(form.method))) {
      if (TRACK_FULL)
        convert("form_submit", contact, "", (form.getAttribute("name") || form.id).slice(0, 200));
      else convert("form_submit", contact);
    }
  });

  // 2 and 3. Form and scheduling tools: from a listed origin (HubSpot posts from this window), a
  // known message, from one of the page's iframes. Other origins' messages are not even read.
  listen(w, "message", (e) => {
    const { source, origin, data } = e as MessageEvent;
    const text = (source === w ? origin === loc.origin : listed(hostOf(origin))) ? textOf(data) : "";
    const kind = classify(text);
    if (
      kind &&
      (source === w || all(d, "iframe").some((f) => (f as HTMLIFrameElement).contentWindow === source))
    )
      convert(kind, { email: emailIn(text) });
  });

  if (TRACK_FULL) {
    const pageFetch = w.fetch;
    full.fetch = pageFetch;
    // Links changed late: decorated when clicked.
    listen(d, "click", (e) => {
      const link = (e.target as Element).closest?.("a");
      if (link) scan(link);
    });

    // 4. fetch and XHR sends with a body (so not a GET) holding an email, answered with success by
    // this site or a listed tool: a lead.
    const emailOf = (body: unknown) =>
      emailIn(`${typeof body === "object" ? new URLSearchParams(body as never) : body}`.replace(/%40/g, "@"));
    const submitted = (email: string | undefined, url: string) => {
      const host = hostOf(url);
      if (email && (host === loc.host || (domain && host.endsWith(domain)) || listed(host)))
        convert("form_submit", { email });
    };
    w.fetch = (input, init) => {
      const email = emailOf(init?.body);
      const response = pageFetch(input, init);
      response.then((r) => r.ok && submitted(email, r.url)).catch(() => {});
      return response;
    };
    const xhrSend = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (this: XMLHttpRequest, body) {
      const email = emailOf(body);
      listen(this, "load", () => this.status < 300 && submitted(email, this.responseURL));
      return xhrSend.call(this, body);
    };

    // 5. An email typed in a form whose box does not say "thank you" yet arms the check in route().
    listen(d, "input", (e) => {
      const form = (e.target as HTMLInputElement).form;
      const box = form?.parentElement || d.body;
      full.typed = formContact(form || d.body);
      // biome-ignore lint/performance/useDomNodeTextContent: the text shown, not a hidden success message.
      if (full.typed.email && !THANKS.test(box.innerText)) full.armed = box;
    });
  }

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
