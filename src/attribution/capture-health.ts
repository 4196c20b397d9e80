import type { HealthCounts, UnresolvedSignal } from "../queries/attribution-health.ts";
import { isUnresolvedMacro } from "./ad-resolution.ts";

export interface HealthIssue {
  code: "unresolved_macros" | "unresolved_ads" | "leads_without_utm" | "pixel_silent";
  message: string;
  count: number;
}

export interface CaptureHealth {
  verdict: "good" | "degraded" | "broken" | "no_data";
  events_pub_30j: number;
  pct_exact_id: number;
  pct_par_nom: number;
  pct_non_resolu: number;
  pixel_sessions_30j: number;
  pixel_derniere_activite: string | null;
  pixel_pct_avec_id: number | null;
  issues: HealthIssue[];
}

/**
 * Percentages (0–100, one decimal) of counts that add up to exactly 100.0 (largest remainder on
 * tenths, ties in the given order; the same rule as `captureShares`, from counts rather than a list
 * of resolutions). All zero when the total is zero.
 */
export function sharesOf(counts: readonly number[]): number[] {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return counts.map(() => 0);
  const tenths = counts.map((c) => Math.floor((c * 1000) / total));
  const remainders = counts.map((c) => (c * 1000) % total);
  let missing = 1000 - tenths.reduce((a, b) => a + b, 0);
  const order = counts.map((_, i) => i).sort((a, b) => (remainders[b] ?? 0) - (remainders[a] ?? 0));
  for (const slot of order) {
    if (missing === 0) break;
    tenths[slot] = (tenths[slot] ?? 0) + 1;
    missing -= 1;
  }
  return tenths.map((t) => t / 10);
}

const present = (v: string | null) => (v === null || v.trim() === "" ? null : v.trim());

/** An unresolved event whose every ad signal is a literal placeholder (resolveAd's `unresolved_macro`). */
function onlyMacros(s: UnresolvedSignal): boolean {
  const values = [s.utm_ad_id, s.meta_ad_id, s.utm_content].map(present).filter((v) => v !== null);
  return values.length > 0 && values.every(isUnresolvedMacro);
}

const examples = (values: (string | null)[]) =>
  [...new Set(values.map(present).filter((v): v is string => v !== null))]
    .slice(0, 3)
    .map((v) => `"${v}"`)
    .join(", ");

/**
 * The capture health object (docs/metrics.md "Attribution"). Verdict, first match wins:
 * `no_data` — no event and no web touchpoint in the 30 days;
 * `broken` — the pixel is silent, or events arrived but none carries an ad signal, or 50 % or more of
 *   the ad-signal events are unresolved;
 * `degraded` — 20 % or more unresolved, or unresolved macros, or 20 % or more of the leads without UTM;
 * `good` — otherwise.
 */
export function captureHealth(counts: HealthCounts, unresolved: readonly UnresolvedSignal[]): CaptureHealth {
  const [exact = 0, byName = 0, nonResolu = 0] = sharesOf([counts.exact, counts.by_name, counts.unresolved]);
  const macros = unresolved.filter(onlyMacros);
  const unknown = unresolved.filter((s) => !onlyMacros(s));
  const macroCount = macros.reduce((a, s) => a + s.n, 0);
  const unknownCount = unknown.reduce((a, s) => a + s.n, 0);
  const pixelSilent = counts.events_7j > 0 && !counts.pixel_active_7j;

  const issues: HealthIssue[] = [];
  if (macroCount > 0) {
    issues.push({
      code: "unresolved_macros",
      count: macroCount,
      message: `${macroCount} event(s) of the last 30 days carry literal ad-platform placeholders (${examples(
        macros.flatMap((s) => [s.utm_content, s.utm_ad_id, s.meta_ad_id]),
      )}) instead of the ad's name or id: the URL parameters were set at campaign or ad set level. Set them in each ad's URL parameters (ad level).`,
    });
  }
  if (unknownCount > 0) {
    issues.push({
      code: "unresolved_ads",
      count: unknownCount,
      message: `${unknownCount} event(s) of the last 30 days name an ad that is not in your ad catalog (e.g. ${examples(
        unknown.flatMap((s) => [s.utm_ad_id ?? s.meta_ad_id ?? s.utm_content]),
      )}): import the spend of these ads, or make utm_ad_id the ad's id and utm_content its exact name.`,
    });
  }
  if (counts.leads_without_utm > 0) {
    issues.push({
      code: "leads_without_utm",
      count: counts.leads_without_utm,
      message: `${counts.leads_without_utm} of ${counts.leads_30j} lead(s) of the last 30 days arrived without any UTM: add the hidden utm_* fields to your forms and load the tracking script before the form widget.`,
    });
  }
  if (pixelSilent) {
    issues.push({
      code: "pixel_silent",
      count: counts.events_7j,
      message:
        counts.pixel_derniere_activite === null
          ? `${counts.events_7j} event(s) arrived in the last 7 days but the tracking script has never sent a page view: install it in the head of every page of your site.`
          : `${counts.events_7j} event(s) arrived in the last 7 days but the tracking script has sent no page view since ${counts.pixel_derniere_activite}: check that it is still installed in the head of your pages.`,
    });
  }

  const leadsWithoutUtmShare = counts.leads_30j === 0 ? 0 : counts.leads_without_utm / counts.leads_30j;
  let verdict: CaptureHealth["verdict"];
  if (counts.events_30j === 0 && counts.pixel_sessions_30j === 0) verdict = "no_data";
  else if (pixelSilent || (counts.events_30j > 0 && counts.events_pub_30j === 0) || nonResolu >= 50) {
    verdict = "broken";
  } else if (nonResolu >= 20 || macroCount > 0 || leadsWithoutUtmShare >= 0.2) verdict = "degraded";
  else verdict = "good";

  return {
    verdict,
    events_pub_30j: counts.events_pub_30j,
    pct_exact_id: exact,
    pct_par_nom: byName,
    pct_non_resolu: nonResolu,
    pixel_sessions_30j: counts.pixel_sessions_30j,
    pixel_derniere_activite: counts.pixel_derniere_activite,
    pixel_pct_avec_id:
      counts.pixel_sessions_30j === 0
        ? null
        : Math.round((counts.pixel_sessions_with_id * 1000) / counts.pixel_sessions_30j) / 10,
    issues,
  };
}
