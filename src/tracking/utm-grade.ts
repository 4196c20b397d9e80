/**
 * The UTM set-up grader behind `{site_url}/api/webhook/test-utm` (SPEC "Ad URL parameter set",
 * "Hidden form fields"; docs/tracking.md "Grade your set-up"). Pure: parameters in, verdict out.
 */

/** Required by attribution: the ad's source, medium, campaign, ad (content) and ad set (term). */
export const REQUIRED_FIELDS = [
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "utm_content",
  "utm_term",
] as const;
/** The ad network's numeric ids: exact resolution to the ad instead of a match by name. */
export const RECOMMENDED_FIELDS = ["utm_campaign_id", "utm_ad_id", "utm_adset_id"] as const;

export type UtmField = (typeof REQUIRED_FIELDS)[number] | (typeof RECOMMENDED_FIELDS)[number];
export type Grade = "A+" | "A" | "B" | "C" | "D" | "F";

/** What the grader made of one field. Only `ok` counts as found. */
export type FieldStatus = "ok" | "missing" | "unresolved_macro" | "not_numeric";

export interface FieldVerdict {
  value: string | null;
  status: FieldStatus;
  required: boolean;
}

export interface UtmVerdict {
  grade: Grade;
  /** One line a person can act on. */
  summary: string;
  /** Fields with a usable value, in the spec's order. */
  found: UtmField[];
  /** Fields absent or unusable (an unresolved macro, a non-numeric id), in the spec's order. */
  missing: UtmField[];
  warnings: string[];
  fields: Record<UtmField, FieldVerdict>;
}

const ALL_FIELDS: readonly UtmField[] = [...REQUIRED_FIELDS, ...RECOMMENDED_FIELDS];
const NUMERIC_FIELDS = new Set<UtmField>(RECOMMENDED_FIELDS);

/**
 * Literal placeholders an ad network failed to replace: Meta `{{ad.name}}`, Google `{campaignid}`,
 * TikTok `__CAMPAIGN_NAME__`, and the same percent-encoded (tested on the decoded value too).
 */
const MACRO = /\{\{[^{}]*\}\}|\{[a-z_][a-z0-9_.:-]*\}|__[A-Z][A-Z0-9_]*__/i;

/** Decodes percent-encoding as far as it is valid; a malformed sequence keeps the raw text. */
function decoded(value: string): string {
  let current = value;
  // Twice at most: values pasted from an already-encoded URL are sometimes encoded again.
  for (let i = 0; i < 2 && /%[0-9a-f]{2}/i.test(current); i++) {
    try {
      current = decodeURIComponent(current.replace(/\+/g, " "));
    } catch {
      break;
    }
  }
  return current;
}

export function hasUnresolvedMacro(value: string): boolean {
  return MACRO.test(value) || MACRO.test(decoded(value));
}

/** `UTM_Source`, `utmSource`, `utm-source` → `utmsource`: how a renamed parameter is recognized. */
function loose(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "");
}
const BY_LOOSE_NAME = new Map(ALL_FIELDS.map((f) => [loose(f), f]));

function gradeOf(requiredFound: number, recommendedFound: number): Grade {
  if (requiredFound === REQUIRED_FIELDS.length)
    return recommendedFound === RECOMMENDED_FIELDS.length ? "A+" : "A";
  if (requiredFound === 4) return "B";
  if (requiredFound === 3) return "C";
  return requiredFound > 0 ? "D" : "F";
}

const SUMMARIES: Record<Grade, string> = {
  "A+": "All required and recommended parameters are set: every lead can be tied to its exact ad.",
  A: "All required parameters are set; add the numeric id parameters so leads resolve to the exact ad, not by name.",
  B: "Most required parameters are set; the missing one loses part of the attribution.",
  C: "Some required parameters are missing: campaigns or ads cannot be told apart.",
  D: "The set-up is incomplete: attribution is limited to the source at best.",
  F: "No usable required parameter: attribution is not possible with this set-up.",
};

/**
 * Grades a set of parameters, as the ad's URL-parameter field (or a form's hidden fields) would
 * deliver them. `params` is every parameter received, by its exact name: names that are a known
 * field written differently (`UTM_Source`, `utmSource`) are reported, not accepted, as the tracking
 * script and the CRM import do not accept them either.
 *
 * Grades (SPEC): A+ every required and recommended field usable; A every required one; B four of
 * the five required; C three; D one or two; F none.
 */
export function gradeUtmSetup(params: Readonly<Record<string, string | undefined>>): UtmVerdict {
  const warnings: string[] = [];
  const fields = {} as Record<UtmField, FieldVerdict>;
  const macroFields: UtmField[] = [];

  for (const field of ALL_FIELDS) {
    const raw = params[field]?.trim();
    const required = (REQUIRED_FIELDS as readonly string[]).includes(field);
    if (!raw) {
      fields[field] = { value: null, status: "missing", required };
    } else if (hasUnresolvedMacro(raw)) {
      fields[field] = { value: raw, status: "unresolved_macro", required };
      macroFields.push(field);
    } else if (NUMERIC_FIELDS.has(field) && !/^\d+$/.test(raw)) {
      fields[field] = { value: raw, status: "not_numeric", required };
      warnings.push(
        `${field} is "${raw}", not a number: use the ad network's numeric id macro for it (the ad is then matched by name only).`,
      );
    } else {
      fields[field] = { value: raw, status: "ok", required };
    }
  }

  if (macroFields.length > 0) {
    warnings.push(
      `Unresolved macro in ${macroFields.join(", ")}: the ad network sent the placeholder itself. ` +
        "Set the URL parameters at ad level (not on the campaign or ad set) so the network fills them in.",
    );
  }

  for (const name of Object.keys(params)) {
    const meant = BY_LOOSE_NAME.get(loose(name));
    if (meant && name !== meant) {
      warnings.push(
        `Parameter "${name}" is not recognized: rename it "${meant}" (names are lowercase with underscores, and case-sensitive).`,
      );
    }
  }

  const medium = fields.utm_medium;
  if (medium.status === "ok" && medium.value?.toLowerCase() !== "paid") {
    warnings.push(`utm_medium is "${medium.value}": the ad URL set-up expects "paid" for ad traffic.`);
  }

  const found = ALL_FIELDS.filter((f) => fields[f].status === "ok");
  const missing = ALL_FIELDS.filter((f) => fields[f].status !== "ok");
  const grade = gradeOf(
    found.filter((f) => fields[f].required).length,
    found.filter((f) => !fields[f].required).length,
  );
  return { grade, summary: SUMMARIES[grade], found, missing, warnings, fields };
}
