/**
 * The tracker's pure parts: the parameter and vendor tables, macros, the channel-versus-ad merge,
 * the first touch, cookie-domain candidates, URL decoration, vendor messages, thank-you paths and
 * contacts. Touches no browser global when imported, so the Node tests import it as it is. Written
 * with an eye on size (track.js is served gzip under 4,100 bytes): loose equality and arrow
 * functions, which minify shorter.
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
  /^(([dgqy]|fb|tt|tw)clid|[gw]braid|gclsrc|gad_(source|campaignid)|msclkid|li_fat_id|sccid|epik|rdt_cid|tblci|dicbo|oborigurl|ircl(ick)?id|cjevent)$/i;

/** GoHighLevel's form (`_ud`: the contact; keyed `embedded_iframe_*` it is not a submission) and calendar. */
const GHL = /"_ud"|booking-complete/;
/** HubSpot's legacy form callbacks, posted in the page: before and after its server answered. */
export const HUBSPOT = /"onFormSubmit/;

/**
 * The vendor table (TRACKING §2): hosts of booking and form tools, their sub-domains included, whose
 * links, iframes and embeds get the attribution; with the message that, from one of their iframes,
 * means "booked" or "submitted" (in the message as JSON text; Cal.com's `dryRunBookingSuccessful…`
 * is not a booking). A message counts only from its own vendor's host.
 */
export const VENDORS: Record<string, RegExp | 0> = {
  "calendly.com": /event_scheduled/,
  // V2, the deprecated event sent with it, and a reschedule.
  "cal.com": /"(rescheduleB|b)ookingS/,
  "typeform.com": /"form-submit"/,
  "tally.so": /FormSubmitted/,
  "jotform.com": /submission-completed/,
  "fillout.com": /"form_submit"/,
  "leadconnectorhq.com": GHL,
  "msgsndr.com": GHL,
  "oncehub.com": /booking\.scheduled|form\.completed/,
};
// Decorated only: no message of theirs means a booking or a submission.
for (const host of "hubspot.com hsforms.com savvycal.com tidycal.com zcal.co iclosed.io".split(" "))
  VENDORS[host] = 0;

/** Whether a host is `base` or one of its sub-domains. */
export const within = (host: string, base: string): boolean => `.${host}`.endsWith(`.${base}`);

/** The vendor table's key for a host, if it is a vendor's. */
export const vendorOf = (host: string): string | undefined =>
  Object.keys(VENDORS).find((v) => within(host, v));

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;
/** utm_medium values of a bought click (as the service's isPaidMedium). */
const PAID = /^(paid([-_]?social)?|cpc|ppc|cpm|display|ads)$/i;
/**
 * A whole value that is one unexpanded ad-platform placeholder (as the service's isUnresolvedMacro):
 * `{{ad.name}}`, `{campaignid}`, `%%AD_ID%%`, `[ad_id]`, `__CAMPAIGN_NAME__`.
 */
const MACRO = /^(\{+[\w. :-]+\}+|(%%|__)\w+\2|\[[\w.:-]+\])$/;

/** `decodeURIComponent` that leaves a value it cannot decode as it is. */
export const decode = (value: string): string => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/**
 * A placeholder the ad network left unresolved, raw or still percent-encoded once (the query string
 * has already decoded a value once: a URL that encoded it twice arrives encoded once).
 */
export const isMacro = (value: string | undefined): boolean => MACRO.test(decode(`${value}`).trim());

/** 8 to 16 characters of [0-9a-z]: a beacon, visitor or session id. */
export const newId = (): string => Date.now().toString(36) + Math.random().toString(36).slice(2, 10);

/**
 * A beacon's id: 128 random bits as 32 hex digits (`getRandomValues`: `randomUUID` needs https). Made
 * once per beacon, so the fallback send of the same body carries it too and the service stores it once.
 */
export const beaconId = (): string =>
  // `| 256` then `slice(1)`: two hex digits per byte, a leading zero kept.
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => (b | 256).toString(16).slice(1)).join("");

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
  /** The registrable domain the cookies are on, once probed: later pages need no probe. */
  d?: string;
}

/**
 * Merges a page's touch into the state (SPEC "Tracking script behavior" 7 and 8): a new ad click
 * replaces the whole attribution; another touch moves only source and medium while an ad click is
 * held, and replaces the attribution when none is; `utm_channel` records an assist and moves nothing
 * else. A page without parameters keeps everything; 30 minutes without a page start a new session.
 * An unresolved macro is no value: it never enters the attribution nor replaces a held value.
 */
export const merge = (prev: unknown, touch: Touch, now: number): State => {
  // A first state has no session yet (`u` 0): the check below starts one.
  const state = { v: newId(), u: 0, l: {}, t: now, ...(prev as object) } as State;
  if (now - state.u > 18e5) state.s = newId();
  state.u = now;
  if (now - state.t > 2592e6) {
    state.l = {};
    state.p = 0;
  }
  const fields: Touch = {};
  const held: Touch = {};
  for (const k in touch)
    if (!isMacro(touch[k])) fields[k] = touch[k];
    else if (state.l[k]) held[k] = state.l[k];
  const { utm_channel: channel, ...rest } = fields;
  const ad = isAdClick(fields);
  if (channel) state.a = channel;
  if (ad || (!state.p && Object.keys(rest).length)) {
    state.l = { ...held, ...rest };
    state.p = +ad;
    state.t = now;
  } else if (rest.utm_source || rest.utm_medium) {
    state.l = { ...state.l, utm_source: rest.utm_source, utm_medium: rest.utm_medium };
    state.t = now;
  }
  return state;
};

/**
 * The first touch of a visitor without one: its UTMs (macros left out); without a UTM source (the
 * cookie that says a first touch is held), the referrer's host and `referral`, or `direct` and `none`.
 */
export const firstTouch = (touch: Touch, referrer: string, host: string): Touch => {
  // The referrer's host (with its port, as `host`): "https://host/…".split("/")[2].
  const from = referrer.split("/")[2];
  const external = from != host && from;
  const { l } = merge(0, touch, 0);
  return l.utm_source ? l : { utm_source: external || "direct", utm_medium: external ? "referral" : "none" };
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
 * an absent value leaves the URL's own. A Calendly iframe's address gets `embed`, the page's host,
 * as `embed_domain` when it has none: without it Calendly posts no message to the page.
 */
export const decorate = (url: string, values: Touch, base: string, embed?: string | false): string => {
  const u = new URL(url, base);
  const part = /typeform\.com$/.test(u.hostname) ? "hash" : "search";
  const query = new URLSearchParams(u[part].slice(1));
  for (const k in values) if (values[k]) query.set(k, values[k] as string);
  if (embed && within(u.hostname, "calendly.com") && !query.has("embed_domain"))
    query.set("embed_domain", embed);
  u[part] = `${query}`;
  return u.href;
};

/** A message's data as text: a string as it is (Tally sends JSON strings), anything else as JSON. */
export const textOf = (data: unknown): string => {
  try {
    return typeof data == "string" ? data : JSON.stringify(data);
  } catch {
    return "";
  }
};

/** What a vendor's message (as text) means, by the vendor's own signal: a booking or a form submission. */
export const classify = (text: string, signal: RegExp | 0 | undefined): Kind | undefined => {
  const match = signal ? signal.exec(text) : 0;
  if (match) return /ook|schedul/.test(match[0]) ? "booking" : "form_submit";
};

/** Thank-you words, in a page's text or its path's segments. */
export const THANKS = "thank|merci|danke|gracias|obrigad|confirm|success|booked|scheduled";
/**
 * A thank-you segment: made of whole words (`-`, `_` or `.` between them), thank-you words or words
 * that go with them, and at least one thank-you word: `thank-you`, `merci`, `confirmation`,
 * `call-booked`, `thanks.html`; not `thank-you-notes` nor `success-stories`.
 */
const THANKS_SEGMENT = RegExp(
  `^(?=.*(${THANKS}))(((${THANKS})\\w*|you|your|for|booking|call|appointment|meeting|demo|order|form|page|html?)([-_.]|$))+$`,
);

/** Whether a path (and hash route) has a thank-you segment, and of which kind: a booking's words make it a `booking`. */
export const thanksKind = (path: string): Kind | undefined => {
  for (const segment of path.toLowerCase().split(/[/?#]/))
    if (THANKS_SEGMENT.test(segment))
      return /book|sched|appoint|call|meet|demo/.test(segment) ? "booking" : "form_submit";
};

export type Contact = Partial<Record<"email" | "phone", string>>;

/** The first email address in a text. */
const emailIn = (text: string | undefined): string | undefined => EMAIL.exec(text as string)?.[0];

/**
 * A lead's contact in a request body (JSON or form-encoded) or a form's fields: its first email, and
 * the value of its first member named (or, for a field, typed) like a phone; none without either.
 */
export const contactIn = (body: string): Contact | undefined => {
  const text = decode(body);
  const email = emailIn(text);
  const phone = /(phone|tel|mobile)\w*[^\w+]{1,4}(\+?\d[\d ().+-]{5,}\d)/i.exec(text)?.[2];
  if (email || phone) return { email, phone };
};

/** A form's contact from its fields, read as a body of `name type=value` members. */
export const contactOf = (
  fields: ArrayLike<{ name?: string; type?: string; value?: string }>,
): Contact | undefined => contactIn(Array.from(fields, (f) => `&${f.name} ${f.type}=${f.value}`).join(""));
