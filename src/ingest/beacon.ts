import { z } from "zod";

const token = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, "must be 8–64 characters of [A-Za-z0-9_-]");
const short = z.string().trim().max(500).optional();
const platformId = z.string().trim().max(64).optional();
/** What a visitor typed: cut to size rather than refused, so a long name never loses a lead. */
const clipped = (max: number) =>
  z
    .string()
    .trim()
    .transform((s) => s.slice(0, max))
    .optional();

const UTM_PARAMS = new Set(["source", "medium", "campaign", "content", "term", "channel"]);
const AD_ID_PARAMS = new Set(["campaign_id", "adset_id", "ad_id"]);

/**
 * A tracking-script beacon (sent as text/plain JSON). Strict: an unknown member is refused, so a
 * malformed or hostile body never half-lands.
 */
export const beaconSchema = z
  .object({
    type: z.enum(["page_view", "form_submit", "booking"]),
    /** Absent on a first-party tracking host, where the host names the account. */
    client_key: z
      .string()
      .regex(/^ck_[A-Za-z0-9_-]{16}$/, "must be the account's client key")
      .optional(),
    /**
     * Chosen by the client, the same on every resend of the beacon: a resent beacon is stored once per
     * account. At least 22 characters (128 random bits in base64url; hex and UUIDs fit too), so that
     * two clients' ids never meet: a beacon taken for another's resend would be lost.
     */
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{22,64}$/, "must be 22–64 characters of [A-Za-z0-9_-] (128 random bits or more)")
      .optional(),
    visitor_id: token,
    session_id: token.optional(),
    url: z.url({ protocol: /^https?$/ }).max(2048),
    referrer: z.string().max(2048).optional(),
    utm: z
      .object({
        source: short,
        medium: short,
        campaign: short,
        content: short,
        term: short,
        campaign_name: short,
        adset_name: short,
        ad_name: short,
        channel: short,
        type: short,
        sequence: short,
        step: short,
      })
      .strict()
      .optional(),
    ad_ids: z
      .object({ ad_id: platformId, adset_id: platformId, campaign_id: platformId, meta_ad_id: platformId })
      .strict()
      .optional(),
    click_ids: z
      .record(z.string().regex(/^[a-z_]{2,24}$/, "click id names are lower-case words"), z.string().max(500))
      .refine((ids) => Object.keys(ids).length <= 12, "at most 12 click ids")
      .optional(),
    contact: z
      .object({
        email: z.string().trim().max(320).optional(),
        phone: clipped(40),
        name: clipped(200),
        first_name: clipped(100),
        last_name: clipped(100),
      })
      .strict()
      .optional(),
    form: z
      .object({ title: clipped(200) })
      .strict()
      .optional(),
    /**
     * The ad's parameters as the page's URL carried them (`utm_source`, `utm_ad_id`, `gclid`…): the
     * tracking script sends them by name and they are sorted here into `utm`, `ad_ids` and
     * `click_ids`, which keeps that table out of the script's size budget.
     */
    params: z
      .record(z.string().regex(/^[a-z_]{2,24}$/, "parameter names are lower-case words"), z.string().max(500))
      .refine((p) => Object.keys(p).length <= 24, "at most 24 parameters")
      .optional(),
  })
  .strict()
  .transform(({ params, ...beacon }, ctx) => {
    if (!params) return beacon;
    const utm: Record<string, string> = {};
    const adIds: Record<string, string> = {};
    const clickIds: Record<string, string> = {};
    for (const [name, value] of Object.entries(params)) {
      const key = name.replace(/^utm_/, "");
      if (!name.startsWith("utm_")) clickIds[name] = value;
      else if (AD_ID_PARAMS.has(key)) adIds[key] = value;
      else if (UTM_PARAMS.has(key)) utm[key] = value;
      else {
        ctx.addIssue({ code: "custom", path: ["params", name], message: "not a tracked utm parameter" });
        return z.NEVER;
      }
    }
    if (Object.keys(clickIds).length > 12) {
      ctx.addIssue({ code: "custom", path: ["params"], message: "at most 12 click ids" });
      return z.NEVER;
    }
    return {
      ...beacon,
      utm: { ...beacon.utm, ...utm },
      ad_ids: { ...beacon.ad_ids, ...adIds },
      click_ids: { ...beacon.click_ids, ...clickIds },
    };
  });

export type Beacon = z.output<typeof beaconSchema>;

const PAID_MEDIUMS = new Set([
  "paid",
  "cpc",
  "ppc",
  "cpm",
  "paid_social",
  "paidsocial",
  "paid-social",
  "display",
  "ads",
]);

/** utm_medium values that mean the click was bought. */
export function isPaidMedium(medium: string | null | undefined): boolean {
  return PAID_MEDIUMS.has((medium ?? "").toLowerCase());
}

/** A visit from an ad: it carries ad ids or click ids, or a paid medium. */
export function isAdTouch(b: Beacon): boolean {
  const ids = b.ad_ids ?? {};
  if (ids.ad_id || ids.meta_ad_id || ids.adset_id || ids.campaign_id) return true;
  if (b.click_ids && Object.keys(b.click_ids).length > 0) return true;
  return isPaidMedium(b.utm?.medium);
}
