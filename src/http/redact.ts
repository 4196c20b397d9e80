/**
 * Response redaction (SPEC "Fields never returned"): strips forbidden fields at every nesting level and
 * masks AI model identifiers, so no handler has to remember to do it.
 */

/** Replaces every AI model identifier: callers must only ever see the service itself. */
export const SERVICE_NAME = "Ascribe";

/** Field-name fragments from SPEC, matched as substrings of the lower-cased field name. */
export const REDACTED_FRAGMENTS: readonly string[] = Object.freeze([
  // credentials and secrets
  "access_token",
  "refresh_token",
  "api_key",
  "apikey",
  "secret",
  "signing",
  "service_role",
  "password",
  "webhook_secret",
  "encryption",
  "tokenenc",
  "bearer",
  // AI internals
  "model",
  "model_name",
  "provider",
  "prompt",
  "system_prompt",
  "temperature",
  "embedding",
  // internal costs
  "cost",
  "cost_estimate",
  "token_count",
  "tokens_used",
  "price_input",
  "price_output",
  // margins
  "gross_margin",
  "net_profit",
  "net_profit_after_ads",
  "wholesale",
  "markup",
  "platform_fee",
  "margin_pct",
  "agency_margin",
  "contribution_margin",
]);

/** `finance/pnl` also hides everything that would reveal the agency's own economics. */
export const PNL_EXTRA_FRAGMENTS: readonly string[] = Object.freeze([
  "margin",
  "profit",
  "wholesale",
  "markup",
  "cost_of",
  "cogs",
]);

/*
 * Model families. One rule throughout: a bare family name never matches, a version or variant is
 * required. Many family names are ordinary words, first names or referral sources ("Claude",
 * "Gemini", "Llama", "whisper", "command", utm_source "chatgpt"), and masking those in customer
 * data would corrupt it. So "mistral" alone (a wind, a brand, a restaurant) is NOT a model id,
 * while "mistral-large-latest" is. Digits glued to the name count as a version ("llama3").
 */
const SEG = "[a-z0-9._]+";
const TAIL = `(?:-${SEG})*`;
const FAMILIES = [
  `(?:chat)?gpt(?:-?\\d[a-z0-9.]*|-(?:oss|image|realtime|audio))${TAIL}`,
  // "o2" is skipped on purpose: OpenAI never used it (trademark) and it is a real telecom brand.
  `o[13-9]${TAIL}`,
  `claude-(?:instant|haiku|sonnet|opus|\\d)[a-z0-9._]*${TAIL}`,
  `gemini-(?:pro|ultra|nano|flash|exp|\\d)[a-z0-9._]*${TAIL}`,
  `gemma-?\\d[a-z0-9._]*${TAIL}`,
  `(?:code)?llama-?\\d[a-z0-9._]*${TAIL}`,
  `(?:mistral|mixtral|codestral|pixtral|ministral|deepseek|grok|phi|whisper|qwen|yi)-?\\d[a-z0-9._]*${TAIL}`,
  `(?:mistral|mixtral|codestral|pixtral|ministral|deepseek|grok|qwen)(?:-${SEG})+`,
  `command-(?:r|light|nightly|a)${TAIL}`,
  `text-(?:embedding|davinci|curie|babbage|ada|moderation)${TAIL}`,
  `(?:davinci|curie|babbage|ada)-\\d{3}`,
  `(?:dall-e|tts|sora)-${SEG}${TAIL}`,
];
const MODEL_ID = new RegExp(
  `^(?:ft:)?(?:[a-z0-9][a-z0-9._-]*/)?(?:${FAMILIES.join("|")})(?::[a-z0-9._-]*)*$`,
  "i",
);
// Real identifiers are short; skipping long text also keeps regex work bounded on large bodies.
const MAX_MODEL_ID_LENGTH = 120;

/** True when the whole trimmed string is an AI model identifier (optional `vendor/` prefix). */
export function looksLikeModelId(s: string): boolean {
  const t = s.trim();
  return t.length > 0 && t.length <= MAX_MODEL_ID_LENGTH && MODEL_ID.test(t);
}

const NO_FRAGMENTS: readonly string[] = Object.freeze([]);
/** Distinct field names remembered per fragment list; past this the memory starts afresh. */
const MAX_REMEMBERED_KEYS = 4096;
const deciders = new WeakMap<readonly string[], (key: string) => boolean>();

/**
 * Whether a field name is dropped, for one list of extra fragments (a route's own, fixed at start-up).
 * Rows and requests repeat the same field names: each distinct one is decided once per list, not
 * once per response.
 */
function droppedKeys(extraFragments: readonly string[]): (key: string) => boolean {
  const known = deciders.get(extraFragments);
  if (known) return known;
  const fragments = [...REDACTED_FRAGMENTS, ...extraFragments.map((f) => f.toLowerCase())];
  const decided = new Map<string, boolean>();
  const isDropped = (key: string): boolean => {
    let drop = decided.get(key);
    if (drop === undefined) {
      const lower = key.toLowerCase();
      drop = fragments.some((f) => lower.includes(f));
      if (decided.size >= MAX_REMEMBERED_KEYS) decided.clear();
      decided.set(key, drop);
    }
    return drop;
  };
  deciders.set(extraFragments, isDropped);
  return isDropped;
}

/**
 * Deep copy of `value` without forbidden fields and with model identifiers masked. Only own
 * enumerable string keys are copied: symbol markers (tenant barrier) are not part of a response.
 * Dates are kept as the same instance; any other non-array object is copied as a plain object,
 * which is what JSON serialisation would send anyway.
 */
export function redact(value: unknown, extraFragments: readonly string[] = NO_FRAGMENTS): unknown {
  const isDropped = droppedKeys(extraFragments);
  // Ancestors only: shared (non-cyclic) references are legal and simply copied twice.
  const path = new Set<object>();

  const visit = (v: unknown): unknown => {
    if (typeof v === "string") return looksLikeModelId(v) ? SERVICE_NAME : v;
    if (typeof v !== "object" || v === null || v instanceof Date) return v;
    if (path.has(v)) throw new TypeError("redact: circular structure");
    path.add(v);
    let out: unknown;
    if (Array.isArray(v)) {
      out = v.map(visit);
    } else {
      const obj: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(v)) {
        if (isDropped(key)) continue;
        // Plain assignment of "__proto__" would replace the copy's prototype instead of adding a field.
        if (key === "__proto__") {
          Object.defineProperty(obj, key, {
            value: visit(child),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else {
          obj[key] = visit(child);
        }
      }
      out = obj;
    }
    path.delete(v);
    return out;
  };

  return visit(value);
}

/** A value a flat row holds directly: copied (strings masked) without the general walk. */
function isFlatValue(v: unknown): boolean {
  return typeof v !== "object" || v === null;
}

/**
 * `redact(rows)` for a list of rows, the same result, cheaper for rows whose fields are scalars or
 * arrays of scalars (a streamed list's rows, tens of thousands a request): such a row is copied
 * field by field (no entries array, no ancestor set: a flat row holds no cycle); any other row, and
 * any other field, goes through the general walk.
 */
export function redactRows(
  rows: readonly unknown[],
  extraFragments: readonly string[] = NO_FRAGMENTS,
  /** A field left out of every copy besides the dropped ones (`account_id`: never returned). */
  omitted?: string,
): unknown[] {
  const fragments = droppedKeys(extraFragments);
  const isDropped = omitted === undefined ? fragments : (key: string) => key === omitted || fragments(key);
  const mask = (v: unknown) => (typeof v === "string" && looksLikeModelId(v) ? SERVICE_NAME : v);
  const out = new Array<unknown>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    out[i] = isFlatRow(row)
      ? copyFlatRow(row, isDropped, mask)
      : redact(without(row, omitted), extraFragments);
  }
  return out;
}

function without(row: unknown, omitted: string | undefined): unknown {
  if (omitted === undefined || typeof row !== "object" || row === null || !Object.hasOwn(row, omitted))
    return row;
  const { [omitted]: _, ...rest } = row as Record<string, unknown>;
  return rest;
}

/** A plain row whose own fields are all scalars or arrays of scalars. */
function isFlatRow(row: unknown): row is Record<string, unknown> {
  if (typeof row !== "object" || row === null || Array.isArray(row) || row instanceof Date) return false;
  for (const key in row) {
    if (!Object.hasOwn(row, key)) continue;
    const v = (row as Record<string, unknown>)[key];
    if (isFlatValue(v)) continue;
    if (!Array.isArray(v) || !v.every(isFlatValue)) return false;
  }
  return true;
}

function copyFlatRow(
  row: Record<string, unknown>,
  isDropped: (key: string) => boolean,
  mask: (v: unknown) => unknown,
): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  for (const key in row) {
    // Own fields only, as redact copies them; "__proto__" is left to the general walk's handling.
    if (!Object.hasOwn(row, key) || isDropped(key)) continue;
    const v = row[key];
    const copied = Array.isArray(v) ? v.map(mask) : mask(v);
    if (key === "__proto__") {
      Object.defineProperty(obj, key, {
        value: copied,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      obj[key] = copied;
    }
  }
  return obj;
}
