/**
 * Identity keys of contacts: contacts are keyed by normalized email, with phone as a fallback.
 *
 * Pure and deliberately small: the point is that the same person typed two ways ("  John@X.com",
 * "john@x.com") gets one key, without ever giving two different people the same key. When in doubt a value
 * is rejected (null) rather than guessed, because a wrong merge joins strangers' journeys and sales, while
 * a missed merge only splits one person in two.
 *
 * Every normalizer is idempotent: feeding its own output back gives the same output, so keys can be
 * recomputed from stored values.
 */

// Invisible characters that copy-paste leaves in form fields: zero-width space / joiners, word joiner,
// byte-order mark. `trim()` does not remove the zero-width ones.
const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF]/g;

// Characters that cannot appear in an unquoted address: whitespace, the specials of RFC 5322 and commas or
// semicolons of address lists. Quoted local parts ("john doe"@x.com) are not supported: nobody types them
// into a form, and accepting quotes would make two spellings of one address.
const FORBIDDEN_IN_EMAIL = /[\s<>()[\]\\,;:"]/;

function stripBrackets(value: string): string {
  return value.startsWith("<") && value.endsWith(">") ? value.slice(1, -1).trim() : value;
}

/**
 * Normalizes an email address to its key, or null when it is not a plausible address.
 *
 * - Trims, removes invisible characters, applies Unicode NFC, lower-cases the whole address. The local
 *   part is case-sensitive in RFC 5321, but no mailbox provider treats it so, and people type
 *   "John.Doe@…" and "john.doe@…" for the same inbox.
 * - Strips surrounding angle brackets (`<a@b.co>`) and a `mailto:` prefix (with its `?subject=…` query),
 *   in either nesting order.
 * - Plausible means: exactly one `@`; a non-empty local part; a domain with at least one dot, no empty
 *   label (no leading, trailing or doubled dot); nothing from `FORBIDDEN_IN_EMAIL`. A display-name form
 *   ("John <john@x.com>") is rejected rather than parsed: it does not come from a form field, and an
 *   importer that has such values should extract the address itself.
 * - Does NOT strip `+tags` or Gmail's dots: for most providers "anna+shop@x.com" and "anna.b@x.com" are
 *   different inboxes (often different people, or a shared team address), so folding them would merge
 *   people who are not the same; even for Gmail, only the domain says whether dots matter, and a custom
 *   domain hosted at Google cannot be recognized from the address.
 */
export function normalizeEmail(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  let value = raw.replace(INVISIBLE, "").normalize("NFC").trim();
  value = stripBrackets(value);
  if (/^mailto:/i.test(value)) {
    value = value.slice("mailto:".length);
    const query = value.indexOf("?");
    if (query !== -1) value = value.slice(0, query);
    value = value.trim();
  }
  value = stripBrackets(value).toLowerCase().normalize("NFC");

  if (value === "" || FORBIDDEN_IN_EMAIL.test(value)) return null;
  const parts = value.split("@");
  if (parts.length !== 2) return null;
  const [local = "", domain = ""] = parts;
  if (local === "") return null;
  const labels = domain.split(".");
  if (labels.length < 2 || labels.some((label) => label === "")) return null;
  return value;
}

// Calling codes whose national numbers keep their leading 0 after the country code (Italian landlines
// are +39 06…, San Marino and Vatican use the Italian plan). Everywhere else a national leading 0 is the
// trunk prefix, dropped in international form (France 06… → +33 6…).
const KEEPS_LEADING_ZERO = new Set(["39", "378", "379"]);

// Digits and the separators people write between them: space, dot, dash, slash, parentheses.
const PHONE_CHARS = /^\+?[0-9\s.\-/()]+$/;

/**
 * Normalizes a phone number to its key, or null when it cannot be one.
 *
 * - A `tel:` prefix is dropped; then only digits, spaces, dots, dashes, slashes, parentheses and one
 *   leading `+` are allowed. Letters (an "ext. 12" extension, "n/a") make the value null rather than
 *   guessing which digits are the number.
 * - International form: a leading `+` is kept, a leading `00` becomes `+`. The "(0)" written in
 *   "+44 (0)20 7946 0958" is the national trunk prefix that must not be dialed internationally, so it is
 *   removed in international form only. A country code cannot start with 0, so "+0…" is null.
 * - National form (no `+`, no `00`): with `defaultCountry`, the account's calling code such as "33" (or
 *   "+33"), the number becomes `+<code><number>`, dropping one national leading 0 (except Italy, San
 *   Marino, Vatican, see above) and, for the North American plan ("1"), the leading trunk 1 of an
 *   11-digit number. Without `defaultCountry` the digits are kept as they are, without `+`: "(555)
 *   123-4567" → "5551234567", "06 12 34 56 78" → "0612345678". We do not know the country, so we neither
 *   drop the 0 nor guess a code; such a key only matches the same national number, and the caller should
 *   pass the account's country to make it match the international form of the same phone.
 * - Fewer than 6 or more than 15 digits (E.164's maximum, country code included) → null.
 *
 * No numbering-plan validation: that needs a phone library, and the key only has to be stable and to keep
 * different numbers apart, which plain digits do. One known miss of that choice: a national-form value
 * that already holds the country code without `+` ("33612345678" with "33") gets the code twice.
 *
 * @throws RangeError when `defaultCountry` is not 1–3 digits (with an optional `+`): that is a
 *   configuration error, not messy input, and silently ignoring it would produce national keys that never
 *   match.
 */
export function normalizePhone(raw: string | null | undefined, defaultCountry?: string): string | null {
  let country: string | null = null;
  if (defaultCountry !== undefined) {
    const match = /^\+?([1-9][0-9]{0,2})$/.exec(defaultCountry.trim());
    if (!match?.[1])
      throw new RangeError(`defaultCountry must be a calling code like "33", got "${defaultCountry}"`);
    country = match[1];
  }
  if (raw === null || raw === undefined) return null;

  let value = raw.replace(INVISIBLE, "").trim();
  if (/^tel:/i.test(value)) value = value.slice("tel:".length).trim();
  if (!PHONE_CHARS.test(value)) return null;

  const compact = value.replace(/\s/g, "");
  // The prefix is read past separators: ")00 33…" is international too, so that a
  // normalized value normalizes to itself.
  const lead = compact.replace(/[()./-]/g, "");
  const international = lead.startsWith("+") || lead.startsWith("00");
  const withoutTrunk = international ? compact.replace(/\(0\)/g, "") : compact;
  let digits = withoutTrunk.replace(/[^0-9]/g, "");

  let key: string;
  if (lead.startsWith("+")) {
    key = `+${digits}`;
  } else if (lead.startsWith("00")) {
    digits = digits.slice(2);
    key = `+${digits}`;
  } else if (country !== null) {
    if (country === "1" && digits.length === 11 && digits.startsWith("1")) digits = digits.slice(1);
    else if (!KEEPS_LEADING_ZERO.has(country) && digits.startsWith("0")) digits = digits.slice(1);
    digits = `${country}${digits}`;
    key = `+${digits}`;
  } else {
    key = digits;
  }

  if (key.startsWith("+0")) return null;
  if (digits.length < 6 || digits.length > 15) return null;
  return key;
}

export type ContactKey = { kind: "email" | "phone"; key: string };

/**
 * A contact's identity key: the email when there is a usable one, else the phone, else null.
 *
 * Both values are normalized again here (the normalizers are idempotent), so a raw value that slipped
 * through still gets its canonical key, and an invalid email falls back to the phone instead of becoming a
 * key. The phone is normalized without a default country: pass the output of `normalizePhone` (called with
 * the account's country) to get international keys.
 */
export function contactKey(email: string | null, phone: string | null): ContactKey | null {
  const e = normalizeEmail(email);
  if (e !== null) return { kind: "email", key: e };
  const p = normalizePhone(phone);
  if (p !== null) return { kind: "phone", key: p };
  return null;
}
