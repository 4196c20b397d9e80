/**
 * The tracker's pure parts: parameter and vendor tables, the channel-versus-ad merge, the first touch,
 * cookie-domain candidates, URL decoration, vendor message kinds and contacts. Touches no browser
 * global when imported, so the Node tests import it as it is. Written for size (track.js must stay
 * under 5,000 bytes minified): loose equality and arrow functions, which minify shorter.
 */

/** A touch's parameters by name: `utm_*` as sent, click ids in lower case. */
export type Touch = Record<string, string | undefined>;
export type Kind = "form_submit" | "booking";

/** Captured `utm_*` parameters: the five required, the three ids, the assist channel. */
export const UTM = "source medium campaign content term campaign_id ad_id adset_id channel"
  .split(" ")
  .map((k) => `utm_${k}`);

/**
 * Click ids (TRACKING §5): Google's (`gad_*` are not ids but mark a paid Google click), Meta,
 * Microsoft, TikTok, LinkedIn, X, Snapchat, Pinterest, Reddit, Quora, Taboola, Outbrain, Yandex,
 * Impact, CJ. Matched in any case (`ScCid`, `obOrigUrl`) and named in lower case; any of them makes
 * the visit an ad click.
 */
const CLICK_ID =
  /^(g(clid|braid|clsrc|ad_source|ad_campaignid)|wbraid|dclid|fbclid|msclkid|ttclid|li_fat_id|twclid|sccid|epik|rdt_cid|qclid|tblci|dicbo|oborigurl|yclid|ircl(ick)?id|cjevent)$/i;

/**
 * Hosts of booking and form tools whose links, iframes and embeds get the attribution, and whose
 * iframes may post "submitted" or "booked" (TRACKING §2); their sub-domains too.
 */
export const VENDORS =
  "calendly.com cal.com typeform.com tally.so jotform.com fillout.com leadconnectorhq.com msgsndr.com oncehub.com savvycal.com tidycal.com zcal.co iclosed.io hsforms.com hubspot.com".split(
    " ",
  );

/**
 * Messages (TRACKING §2) that mean a booking (the first group): Calendly, Cal.com (V2, deprecated,
 * reschedule), GoHighLevel calendar, OnceHub; or a form submission: Typeform and Fillout, HubSpot
 * legacy forms (before and after the server answered), Tally, Jotform, OnceHub forms, GoHighLevel
 * forms. Matched as whole JSON strings in the message's JSON: Cal.com's `dryRun*` events and
 * GoHighLevel's `embedded_iframe_*` contacts match neither.
 */
const KIND =
  /(event_scheduled"|"(rescheduleB|b)ookingSuccessful|booking-complete"|booking\.scheduled")|"(form[-_]submit|onFormSubmit(ted)?|Tally\.FormSubmitted|submission-completed|oncehub\.form\.completed|_ud)"/;

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;
/** utm_medium values of a bought click (as the service's isPaidMedium). */
const PAID = /^(paid([-_]?social)?|cpc|ppc|cpm|display|ads)$/i;

/** 8 to 16 characters of [0-9a-z]: a beacon, visitor or session id. */
export const newId = (): string => Date.now().toString(36) + Math.random().toString(36).slice(2, 10);

/**
 * The tracked parameters of a query string; `utm_*` names are case-sensitive (SPEC "Hidden form
 * fields"). Values are kept as sent: an fbclid is case-sensitive.
 */
export const parseTouch = (search: string): Touch => {
  const touch: Touch = {};
  for (let [name, value] of new URLSearchParams(search))
    if (value && (UTM.includes(name) || (CLICK_ID.test(name) && (name = name.toLowerCase()))))
      touch[name] ||= value.slice(0, 500);
  return touch;
};

/** An ad click carries an ad id, a click id or a paid medium; a `utm_channel` link never is one. */
export const isAdClick = (t: Touch): boolean =>
  !t.utm_channel &&
  (PAID.test(t.utm_medium as string) || Object.keys(t).some((k) => /_id$|^(?!utm_)/.test(k)));

/** The touch state kept in the 30-day cookie (short names: it travels with every request). */
export interface State {
  /** Visitor id. */
  v: string;
  /** Session id, and when the session last saw a page (ms). */
  s: string;
  u: number;
  /** The attribution: source and medium of the last touch; campaign, content, term and ids of the ad. */
  l: Touch;
  /** When a touch last changed `l` (ms); `l` is dropped 30 days after. */
  t: number;
  /** 1 when `l`'s campaign, content, term and ids come from an ad click. */
  p?: number;
  /** Channel of the last assist (`utm_channel`). */
  a?: string;
  /** Last conversion sent: when (ms), its kind and its key, so that one submission sends one beacon. */
  c?: number;
  y?: string;
  k?: string;
}

/**
 * Merges a page's touch into the state (SPEC "Tracking script behavior" 7 and 8): a new ad click
 * replaces the whole attribution; another touch moves only source and medium while an ad click is
 * held, and replaces the attribution when none is; `utm_channel` records an assist and moves nothing
 * else. A page without parameters keeps everything; 30 minutes without a page start a new session.
 */
export const merge = (prev: unknown, touch: Touch, now: number): State => {
  // A first state has no session yet (`u` 0): the check below starts one.
  const state = { v: newId(), u: 0, l: {}, t: now, ...(prev as object) } as State;
  const { utm_channel: channel, ...fields } = touch;
  const ad = isAdClick(touch);
  if (now - state.u > 18e5) state.s = newId();
  state.u = now;
  if (now - state.t > 2592e6) {
    state.l = {};
    state.p = 0;
  }
  if (channel) state.a = channel;
  if (ad || (!state.p && Object.keys(fields).length)) {
    state.l = fields;
    state.p = +ad;
    state.t = now;
  } else if (fields.utm_source || fields.utm_medium) {
    state.l = { ...state.l, utm_source: fields.utm_source, utm_medium: fields.utm_medium };
    state.t = now;
  }
  return state;
};

/**
 * The first touch of a visitor without one: its UTMs; without a UTM source (the cookie that says
 * a first touch is held), the referrer's host and `referral`, or `direct` and `none`.
 */
export const firstTouch = (touch: Touch, referrer: string, host: string): Touch => {
  // The referrer's host (with its port, as `host`): "https://host/…".split("/")[2].
  const from = referrer.split("/")[2];
  const external = from != host && from;
  return touch.utm_source
    ? touch
    : { utm_source: external || "direct", utm_medium: external ? "referral" : "none" };
};

/**
 * Where to try the cookie (TRACKING §3), from two labels outward, at most 8: the first the browser
 * accepts is the registrable domain. None for `localhost` or a single label; an IP address's
 * candidates are refused by the browser but the whole address, which is host-only all the same.
 */
export const cookieDomains = (host: string): string[] =>
  host
    .split(".")
    .map((_, i, labels) => labels.slice(i).join("."))
    .slice(-9, -1)
    .reverse();

/**
 * `url` with the values set in its query (Typeform: its hash), each replaced rather than repeated;
 * an absent value leaves the URL's own.
 */
export const decorate = (url: string, values: Touch, base: string): string => {
  const u = new URL(url, base);
  const part = /typeform\.com$/.test(u.hostname) ? "hash" : "search";
  const query = new URLSearchParams(u[part].slice(1));
  for (const k in values) if (values[k]) query.set(k, values[k] as string);
  u[part] = `${query}`;
  return u.href;
};

/** A message's data as text: a string as it is (Tally sends JSON strings), anything else as JSON. */
export const textOf = (data: unknown): string | undefined => {
  try {
    return typeof data == "string" ? data : JSON.stringify(data);
  } catch {}
};

/** Whether a vendor message (as text) means a booking or a form submission. */
export const classify = (text: string | undefined): Kind | undefined => {
  const match = KIND.exec(text as string);
  if (match) return match[1] ? "booking" : "form_submit";
};

/** The first email address in a text. */
export const emailIn = (text: string | undefined): string | undefined => EMAIL.exec(text as string)?.[0];

export type Contact = Partial<Record<"email" | "phone", string>>;

/** A form's contact from its inputs: the first email and phone (the service trims and cuts them). */
export const contactOf = (inputs: Iterable<{ name: string; type: string; value: string }>): Contact => {
  const contact: Contact = {};
  for (const { name, type, value } of inputs) {
    const k =
      type == "email" || EMAIL.test(value) ? "email" : type == "tel" || /phone/i.test(name) ? "phone" : "";
    if (k && value.trim()) contact[k] ||= value;
  }
  return contact;
};
