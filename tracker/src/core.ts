/**
 * The tracker's pure parts: parameter and vendor tables, the channel-versus-ad merge, the first touch,
 * cookie-domain candidates, URL decoration, vendor message names and contacts. Touches no browser
 * global when imported, so the Node tests import it as it is (TRACKING.md, the tracking field notes).
 */

/** A touch's parameters: `utm_*` names without the prefix, click ids by their lower-case name. */
export type Touch = Record<string, string | undefined>;
export type Kind = "form_submit" | "booking";

/** Captured `utm_*` parameters: the five required, the three ids, the assist channel. */
export const UTM = "source medium campaign content term campaign_id ad_id adset_id channel".split(" ");

/**
 * Click ids (TRACKING §5), matched in any case (`ScCid`, `obOrigUrl`) and named in lower case; any of
 * them makes the visit an ad click. `gad_*` are not ids but mark a paid Google click.
 */
export const CLICK_IDS =
  "gclid gbraid wbraid dclid gclsrc gad_source gad_campaignid fbclid msclkid ttclid li_fat_id twclid sccid epik rdt_cid qclid tblci dicbo oborigurl yclid irclickid irclid cjevent".split(
    " ",
  );

/**
 * Hosts of booking and form tools whose links, iframes and embeds get the attribution, and whose
 * iframes may post "submitted" or "booked" (TRACKING §2); their sub-domains too.
 */
export const VENDORS =
  "calendly.com cal.com typeform.com tally.so jotform.com fillout.com leadconnectorhq.com msgsndr.com oncehub.com savvycal.com tidycal.com zcal.co iclosed.io hsforms.com hubspot.com".split(
    " ",
  );

/**
 * Messages (TRACKING §2) that mean a booking: Calendly, Cal.com (V2, deprecated, reschedule),
 * GoHighLevel calendar, OnceHub; and a form submission: Typeform and Fillout, HubSpot legacy forms
 * (before and after the server answered), Tally, Jotform, GoHighLevel forms, OnceHub forms. Matched as
 * whole JSON strings in the message's JSON: Cal.com's `dryRun*` events and GoHighLevel's
 * `embedded_iframe_*` contacts match neither.
 */
const BOOKED = /event_scheduled"|"(rescheduleB|b)ookingSuccessful|booking-complete"|booking\.scheduled"/;
const SUBMITTED =
  /"(form[-_]submit|onFormSubmit(ted)?|Tally\.FormSubmitted|submission-completed|oncehub\.form\.completed)"|"_ud"/;

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;
/** utm_medium values of a bought click (as the service's isPaidMedium). */
const PAID = /^(paid([-_]?social)?|cpc|ppc|cpm|display|ads)$/i;
/** A person's name field (the first name of a split name); not a company's or a user name. */
const NAME = /^((first|full|your)[-_]?)?name$|^fname$/i;

/** 8 to 16 characters of [0-9a-z]: a beacon, visitor or session id. */
export const newId = (): string => Date.now().toString(36) + Math.random().toString(36).slice(2, 10);

/**
 * The tracked parameters of a query string; `utm_*` names are case-sensitive (SPEC "Hidden form
 * fields"). Values are kept as sent: an fbclid is case-sensitive.
 */
export function parseTouch(search: string): Touch {
  const touch: Touch = {};
  new URLSearchParams(search).forEach((value, name) => {
    const utm = name.slice(0, 4) === "utm_";
    const key = utm ? name.slice(4) : name.toLowerCase();
    if (value && (utm ? UTM : CLICK_IDS).includes(key)) touch[key] ||= value.slice(0, 500);
  });
  return touch;
}

/** An ad click carries an ad id, a click id or a paid medium; a `utm_channel` link never is one. */
export const isAdClick = (t: Touch): boolean =>
  !t.channel && (PAID.test(t.medium || "") || Object.keys(t).some((k) => /_id$/.test(k) || !UTM.includes(k)));

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
export function merge(prev: unknown, touch: Touch, now: number): State {
  // A first state has no session yet (`u` 0): the check below starts one.
  const state = { v: newId(), u: 0, l: {}, t: now, ...(prev as object) } as State;
  const { channel, ...fields } = touch;
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
  } else if (fields.source || fields.medium) {
    state.l = { ...state.l, source: fields.source, medium: fields.medium };
    state.t = now;
  }
  return state;
}

/**
 * The first touch to record, or undefined while one is held (its source: a UTM source, a referrer's
 * host or `direct`). Without UTMs: the referrer's host and `referral`, or `direct` and `none`.
 */
export function firstTouch(
  held: string | undefined,
  touch: Touch,
  referrer: string,
  host: string,
): Touch | undefined {
  if (held) return;
  // The referrer's host (with its port, as `host`): "https://host/…".split("/")[2].
  const from = referrer.split("/")[2];
  const external = from !== host && from;
  return touch.source || touch.medium
    ? touch
    : { source: external || "direct", medium: external ? "referral" : "none" };
}

/**
 * Where to try the cookie (TRACKING §3), from two labels outward, at most 8: the first the browser
 * accepts is the registrable domain. None for an IP address, `localhost` or a single label.
 */
export const cookieDomains = (host: string): string[] =>
  /^[\d.]+$|:/.test(host)
    ? []
    : host
        .split(".")
        .map((_, i, labels) => labels.slice(i).join("."))
        .slice(-9, -1)
        .reverse();

/** The beacon's `utm`, `ad_ids` and `click_ids` of a touch. */
export function touchFields(touch: Touch) {
  const utm: Touch = {};
  const ad_ids: Touch = {};
  const click_ids: Touch = {};
  for (const k in touch) (UTM.includes(k) ? (/_id$/.test(k) ? ad_ids : utm) : click_ids)[k] = touch[k];
  return { utm, ad_ids, click_ids };
}

/** `url` with `values` set in its query (Typeform: its hash), each replaced rather than repeated. */
export function decorate(url: string, values: Touch, base: string): string {
  const u = new URL(url, base);
  const part = u.hostname.endsWith("typeform.com") ? "hash" : "search";
  const query = new URLSearchParams(u[part].slice(1));
  for (const k in values) query.set(k, values[k] || "");
  u[part] = `${query}`;
  return u.href;
}

/** A message's data as text: a string as it is (Tally sends JSON strings), anything else as JSON. */
export function textOf(data: unknown): string {
  try {
    return typeof data === "string" ? data : `${JSON.stringify(data)}`;
  } catch {
    return "";
  }
}

/** Whether a vendor message (as text) means a booking or a form submission. */
export const classify = (text: string): Kind | undefined =>
  BOOKED.test(text) ? "booking" : SUBMITTED.test(text) ? "form_submit" : undefined;

/** The first email address in a text. */
export const emailIn = (text: string): string | undefined => EMAIL.exec(text)?.[0];

export type Contact = Partial<Record<"email" | "phone" | "name", string>>;

/** A form's contact from its fields (`[name, type, value]`): the first email, phone and name. */
export function contactOf(fields: [string, string, string][]): Contact {
  const contact: Contact = {};
  for (const [name, type, value] of fields) {
    const v = value.trim();
    const k =
      type === "email" || EMAIL.test(v)
        ? "email"
        : type === "tel" || /phone/i.test(name)
          ? "phone"
          : NAME.test(name)
            ? "name"
            : "";
    if (k && v) contact[k] ||= v.slice(0, k === "phone" ? 40 : 200);
  }
  return contact;
}
