/**
 * Ad resolution (DESIGN §6): which known ad a touchpoint or event belongs to.
 *
 * - *exact*: an ad id it carries (`utm_ad_id`, then `meta_ad_id`, then the platform ad id) is a known ad id;
 * - *by name*: else `utm_content` matches exactly one known ad name (see `normalizeAdName`), the campaign
 *   name breaking ties;
 * - *unresolved*: else, with a reason capture health can report.
 *
 * Platform ids are strings end to end (DESIGN §6): Meta's 18-digit ids exceed 2^53, so
 * "120210000000000001" and "120210000000000002" are the same JavaScript number. Nothing here parses an
 * id; ids are compared as exact strings after trimming.
 *
 * Pure: the caller loads the account's ads and the signals; nothing here touches the database.
 */

/** One ad of the account's catalog, as resolution needs it. */
export interface KnownAd {
  ad_id: string;
  ad_name: string;
  campaign_id: string | null;
  campaign_name: string | null;
  adset_id: string | null;
  adset_name: string | null;
  platform: string;
}

/** The account's ads, indexed once so that resolving N touchpoints is O(N). */
export interface AdIndex {
  /** Trimmed ad id → the ad. */
  readonly byId: ReadonlyMap<string, KnownAd>;
  /** `normalizeAdName(ad_name)` → every ad with that name, in catalog order. */
  readonly byName: ReadonlyMap<string, readonly KnownAd[]>;
}

/** What a touchpoint or event carries that can name an ad. Absent, null and blank are the same. */
export interface AdSignals {
  utm_ad_id?: string | null;
  meta_ad_id?: string | null;
  platform_ad_id?: string | null;
  utm_content?: string | null;
  utm_campaign?: string | null;
  campaign_name?: string | null;
}

export type UnresolvedReason =
  | "no_signal"
  | "unknown_id"
  | "unknown_name"
  | "ambiguous_name"
  | "unresolved_macro";

export type Resolution =
  | { method: "exact"; ad: KnownAd }
  | { method: "by_name"; ad: KnownAd }
  | { method: "unresolved"; reason: UnresolvedReason };

/**
 * The name key of an ad name, `utm_content` or campaign name: Unicode NFC, trimmed, inner whitespace
 * runs collapsed to one space, lower-cased (locale-independent).
 *
 * DESIGN asks for case-insensitive and trimmed. Collapsing inner whitespace is a deliberate extra: a
 * hand-typed name with a double space, or a tab from a spreadsheet, is the same ad to a person. The cost is
 * that two ads named "A  B" and "A B" share a key; that can only make a match ambiguous (then the campaign
 * decides or the touch stays unresolved), never credit an ad the touch did not name. NFC makes an accented
 * name typed on one system equal to the same name sent decomposed by another.
 */
export function normalizeAdName(value: string): string {
  return value.normalize("NFC").trim().replace(/\s+/g, " ").toLowerCase();
}

/**
 * Builds the index of an account's ads. An ad id listed twice is the same ad seen twice (e.g. a re-sync):
 * the first entry wins and the later ones are ignored everywhere, so a duplicate never makes its own name
 * look ambiguous. Ids are not scoped by platform: Meta, Google and TikTok ids have different lengths, so
 * a collision across platforms is not a case worth a second key. Ads with a blank id are skipped (they
 * could never be credited by id, and crediting them by name would give results to an ad without an id).
 */
export function buildAdIndex(ads: readonly KnownAd[]): AdIndex {
  const byId = new Map<string, KnownAd>();
  const byName = new Map<string, KnownAd[]>();
  for (const ad of ads) {
    const id = ad.ad_id.trim();
    if (id === "" || byId.has(id)) continue;
    byId.set(id, ad);
    const name = normalizeAdName(ad.ad_name);
    if (name === "") continue;
    const list = byName.get(name);
    if (list) list.push(ad);
    else byName.set(name, [ad]);
  }
  return { byId, byName };
}

// A macro token: what sits between the delimiters of a placeholder. Identifier-like (letters, digits,
// `_`, `.`, `:` for Google's `{ifmobile:…}`, `-`), no spaces, so "[Spring sale]" is not a macro.
const TOKEN = "[A-Za-z_][A-Za-z0-9_.:-]*";
const MACRO_PATTERNS: readonly RegExp[] = [
  new RegExp(`^\\{\\{\\s*${TOKEN}\\s*\\}\\}$`), // Meta, Snapchat: {{ad.id}}, {{ ad.name }}
  new RegExp(`^\\{${TOKEN}\\}$`), // Google, Microsoft, Pinterest: {creative}, {AdId}
  new RegExp(`^%%${TOKEN}%%$`), // Campaign Manager: %%AD_ID%%
  new RegExp(`^\\[${TOKEN}\\]$`), // [ad_id]
  /^__[A-Za-z][A-Za-z0-9_]*__$/, // TikTok: __AID__, __CAMPAIGN_NAME__
];

/**
 * True when a value is a literal, unexpanded ad-platform placeholder: the parameters were set at the
 * wrong level (SPEC, "Ad URL parameter set expected by the service").
 *
 * A value is a macro only when the *whole* trimmed value is one placeholder: `{{ad.id}}`, `{ad_id}`,
 * `%%AD_ID%%`, `[ad_id]`, `__AD_ID__`. "Promo {spring} video" is an ad name with braces in it, not a
 * macro, and so is "[Spring sale]" (a token has no spaces). A placeholder that reached us still
 * percent-encoded (`%7B%7Bad.id%7D%7D`, from a redirect that encoded the URL twice) is decoded once and
 * checked again.
 *
 * `resolveAd` still tries a macro-looking value against the catalog first, so an ad really named
 * "[TEST]" resolves by name; being a macro only changes the reason of an unresolved touch.
 */
export function isUnresolvedMacro(value: string): boolean {
  const trimmed = value.trim();
  if (MACRO_PATTERNS.some((p) => p.test(trimmed))) return true;
  if (/%7B|%5B/i.test(trimmed)) {
    try {
      const decoded = decodeURIComponent(trimmed).trim();
      return MACRO_PATTERNS.some((p) => p.test(decoded));
    } catch {
      // Not valid percent-encoding: a literal value, already checked above.
      return false;
    }
  }
  return false;
}

function present(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  return trimmed === "" ? null : trimmed;
}

/**
 * Resolves one touchpoint or event against the account's index.
 *
 * Ids are tried in order `utm_ad_id`, `meta_ad_id`, `platform_ad_id`; the first that is a known ad id
 * wins, even if a later one names another known ad (the UTM id is the one the advertiser set for this
 * link). Else the normalized `utm_content` is looked up by name: one ad → by_name, whatever its campaign
 * (the campaign only breaks ties); several → the one whose campaign name equals `utm_campaign`, else the
 * one whose campaign name equals `campaign_name` (same normalization), when exactly one does.
 *
 * When nothing resolves, the reason names the strongest signal that was present, strongest first:
 * a real (non-macro) id → `unknown_id` (even if the name was also unknown or ambiguous: with the id in
 * the catalog the touch would have been exact, so the catalog is what to look at); else a real
 * `utm_content` → `ambiguous_name` or `unknown_name`; else an id or `utm_content` that is an unresolved
 * macro → `unresolved_macro` (a macro id is ignored as a signal, but it still explains the miss);
 * else `no_signal`. Campaign fields alone cannot name an ad, so they never change the reason.
 */
export function resolveAd(signals: AdSignals, index: AdIndex): Resolution {
  const ids = [signals.utm_ad_id, signals.meta_ad_id, signals.platform_ad_id]
    .map(present)
    .filter((v) => v !== null);
  for (const id of ids) {
    const ad = index.byId.get(id);
    if (ad) return { method: "exact", ad };
  }

  const content = present(signals.utm_content);
  let ambiguous = false;
  if (content !== null) {
    const candidates = index.byName.get(normalizeAdName(content)) ?? [];
    const [only] = candidates;
    if (candidates.length === 1 && only) return { method: "by_name", ad: only };
    if (candidates.length > 1) {
      for (const campaign of [signals.utm_campaign, signals.campaign_name]) {
        const wanted = present(campaign);
        if (wanted === null) continue;
        const key = normalizeAdName(wanted);
        const inCampaign = candidates.filter(
          (ad) => ad.campaign_name !== null && normalizeAdName(ad.campaign_name) === key,
        );
        const [chosen] = inCampaign;
        if (inCampaign.length === 1 && chosen) return { method: "by_name", ad: chosen };
      }
      ambiguous = true;
    }
  }

  if (ids.some((id) => !isUnresolvedMacro(id))) return { method: "unresolved", reason: "unknown_id" };
  if (content !== null && !isUnresolvedMacro(content)) {
    return { method: "unresolved", reason: ambiguous ? "ambiguous_name" : "unknown_name" };
  }
  if (ids.length > 0 || content !== null) return { method: "unresolved", reason: "unresolved_macro" };
  return { method: "unresolved", reason: "no_signal" };
}

export interface CaptureShares {
  pct_exact_id: number;
  pct_par_nom: number;
  pct_non_resolu: number;
}

/**
 * Capture health's shares of the three outcomes, in percent (0–100) with one decimal.
 *
 * Rounding is largest remainder on tenths of a percent: each share is floored to a tenth, and the tenths
 * still missing from 1000 go one each to the largest remainders, ties in the order exact, by name,
 * unresolved. So the three values always add up to exactly 100.0 as decimals (their tenths add up to
 * 1000; adding the three JavaScript floats may still give 100.00000000000001, so compare tenths). Each
 * share is within 0.1 of its exact value, and an outcome that occurred never shows as 0 unless its exact
 * share is below 0.1. Example: one of each → 33.4 / 33.3 / 33.3.
 *
 * An empty list gives 0 / 0 / 0, not a made-up 100 somewhere: there is nothing to share, and capture
 * health shows "no events" for it.
 *
 * Integer arithmetic throughout (counts × 1000 stay far below 2^53), so no float error in the split.
 */
export function captureShares(resolutions: readonly Resolution[]): CaptureShares {
  const counts = [0, 0, 0];
  for (const r of resolutions) {
    const slot = r.method === "exact" ? 0 : r.method === "by_name" ? 1 : 2;
    counts[slot] = (counts[slot] ?? 0) + 1;
  }
  const total = resolutions.length;
  if (total === 0) return { pct_exact_id: 0, pct_par_nom: 0, pct_non_resolu: 0 };

  const tenths = counts.map((c) => Math.floor((c * 1000) / total));
  const remainders = counts.map((c) => (c * 1000) % total);
  let missing = 1000 - tenths.reduce((a, b) => a + b, 0);
  // Stable sort: equal remainders keep the order exact, by name, unresolved.
  const order = [0, 1, 2].sort((a, b) => (remainders[b] ?? 0) - (remainders[a] ?? 0));
  for (const slot of order) {
    if (missing === 0) break;
    tenths[slot] = (tenths[slot] ?? 0) + 1;
    missing -= 1;
  }
  const [exact = 0, byName = 0, unresolved = 0] = tenths;
  return { pct_exact_id: exact / 10, pct_par_nom: byName / 10, pct_non_resolu: unresolved / 10 };
}
