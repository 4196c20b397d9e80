import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures, Stripe-style so CRM and payment tools' "custom webhook" features can produce
 * them: header `X-Ascribe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.
 * The timestamp inside the signed text bounds replays to the tolerance window.
 */
export const SIGNATURE_HEADER = "x-ascribe-signature";
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureVerdict =
  | { ok: true; timestamp: number }
  | { ok: false; reason: "missing" | "malformed" | "stale" | "mismatch" };

export function signPayload(secret: string, rawBody: string | Buffer, timestamp: number): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** Checks a signature header against the raw body; `now` in unix seconds. */
export function verifySignature(
  secret: string,
  rawBody: string | Buffer,
  header: string | undefined,
  now: number,
): SignatureVerdict {
  if (!header) return { ok: false, reason: "missing" };
  let timestamp: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(",")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === "t" && value && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    // Several v1 values are allowed, so a secret can be rotated without dropping events.
    else if (name === "v1" && value && /^[0-9a-f]{64}$/i.test(value)) candidates.push(value.toLowerCase());
  }
  if (timestamp === null || candidates.length === 0) return { ok: false, reason: "malformed" };
  if (Math.abs(now - timestamp) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: "stale" };
  const expected = Buffer.from(
    createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex"),
    "utf8",
  );
  const match = candidates.some((c) => timingSafeEqual(Buffer.from(c, "utf8"), expected));
  return match ? { ok: true, timestamp } : { ok: false, reason: "mismatch" };
}
