import { z } from "zod";
import { INSTANT_RANGE_MESSAGE, instantInRange } from "../reports/date-range.ts";
import { normalizeEmail } from "./identity.ts";

/*
 * The records of the import kinds other than events and spend. Field names are the API's own for the
 * resource (SPEC "Resources"), flat so a CSV can carry them; the identity of each is its `id`.
 */

const text = (max: number) => z.string().trim().max(max).nullish();
const platformId = z
  .string({ error: "must be a string (platform ids exceed 2^53 as numbers)" })
  .trim()
  .max(64)
  .nullish();
const datetime = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date-time with a time zone", abort: true })
  .refine(instantInRange, INSTANT_RANGE_MESSAGE);
const money = z.number().finite().min(-1e12).max(1e12);
const jsonObject = z.preprocess(
  (v) => {
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  },
  z.record(z.string(), z.unknown()),
);

export const purchaseRecordSchema = z.object({
  id: z.string().trim().min(1).max(200),
  purchase_date: datetime,
  contact_email: z
    .string()
    .max(320)
    .refine((v) => normalizeEmail(v) !== null, "not a valid email address"),
  contact_name: text(200),
  product_key: text(200),
  product_name: text(200),
  amount: money,
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
    .nullish(),
  commissionable: z.boolean().nullish(),
  commission_rate: z.number().min(0).max(1).nullish(),
  commission_amount: money.nullish(),
  invoice_id: text(200),
  /** Extras for the customer this purchase makes (README). */
  commission_status: z.enum(["active", "expired", "none"]).nullish(),
  commission_expires_at: datetime.nullish(),
});
export type PurchaseRecord = z.output<typeof purchaseRecordSchema>;

export const touchpointRecordSchema = z.object({
  id: z.string().trim().min(1).max(200),
  /** The contact it belongs to; absent for an anonymous visit (then `visitor_id`). */
  email: z
    .string()
    .max(320)
    .refine((v) => normalizeEmail(v) !== null, "not a valid email address")
    .nullish(),
  visitor_id: text(64),
  session_id: text(64),
  kind: z.enum(["web", "conversion"]),
  event_type: z.string().trim().min(1).max(40),
  occurred_at: datetime,
  url: text(2048),
  referrer: text(2048),
  utm_source: text(500),
  utm_medium: text(500),
  utm_campaign: text(500),
  utm_content: text(500),
  utm_term: text(500),
  campaign_name: text(500),
  adset_name: text(500),
  ad_name: text(500),
  channel: text(100),
  ad_id: platformId,
  adset_id: platformId,
  campaign_id: platformId,
  meta_ad_id: platformId,
  gclid: text(500),
  fbclid: text(500),
  ttclid: text(500),
  is_paid: z.boolean().nullish(),
  value: money.nullish(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
    .nullish(),
  product: text(200),
});
export type TouchpointRecord = z.output<typeof touchpointRecordSchema>;

export const creativeRequestRecordSchema = z.object({
  id: z.uuid(),
  reason: z.string().trim().min(1).max(500),
  status: z.enum(["open", "partial", "filled", "cancelled"]),
  requested_count: z.number().int().min(1).max(1000),
  filled_count: z.number().int().min(0).max(1000).nullish(),
  context: jsonObject.nullish(),
  created_at: datetime.nullish(),
  notified_at: datetime.nullish(),
});
export type CreativeRequestRecord = z.output<typeof creativeRequestRecordSchema>;

export const ruleRecordSchema = z.object({
  id: z.uuid(),
  label: z.string().trim().min(1).max(200),
  rule_type: z.string().trim().min(1).max(60),
  platform: text(40),
  campaign_id: platformId,
  campaign_name: text(500),
  enabled: z.boolean().nullish(),
  dry_run: z.boolean().nullish(),
  params: jsonObject.nullish(),
});
export type RuleRecord = z.output<typeof ruleRecordSchema>;

const jsonArray = z.preprocess((v) => {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}, z.array(z.unknown()));

export const pixelRecordSchema = z.object({
  platform: z.string().trim().toLowerCase().min(1).max(40),
  pixel_id: z
    .string({ error: "must be a string (platform ids exceed 2^53 as numbers)" })
    .trim()
    .min(1)
    .max(64),
  name: text(200),
  is_default: z.boolean().nullish(),
  /** Sealed at rest; never returned by the API. */
  access_token: z.string().min(1).max(4096).nullish(),
  routing: jsonObject.nullish(),
});
export type PixelRecord = z.output<typeof pixelRecordSchema>;

const segmentSchema = z.object({
  start_ms: z.number().int().min(0),
  end_ms: z.number().int().min(0),
  speaker_id: z.string().max(100).nullish(),
  speaker_label: z.string().max(200).nullish(),
  speaker_email: z.string().max(320).nullish(),
  text: z.string().max(20_000),
  confidence: z.number().min(0).max(1).nullish(),
});

export const callRecordSchema = z.object({
  id: z.string().trim().min(1).max(200),
  starts_at: datetime,
  title: text(500),
  duration_sec: z.number().int().min(0).max(86_400).nullish(),
  call_analysis_id: text(200),
  summary: text(20_000),
  call_type: text(60),
  is_qualified: z.boolean().nullish(),
  icp_fit_score: z.number().min(0).max(100).nullish(),
  qualification_reasoning: text(20_000),
  next_step_type: text(60),
  next_step_summary: text(5_000),
  next_step_proposed: text(500),
  scorecard_total: z.number().min(0).max(1000).nullish(),
  rep_id: text(100),
  markers: jsonArray
    .pipe(
      z.array(z.object({ ts: z.number().min(0), label: z.string().max(200), status: z.string().max(60) })),
    )
    .nullish(),
  /** Who took part: emails, an array (JSON) or comma-separated text (CSV). */
  participant_emails: z
    .union([
      z.array(z.string()),
      z.string().transform((s) =>
        s
          .split(",")
          .map((e) => e.trim())
          .filter(Boolean),
      ),
    ])
    .nullish(),
  /** The ordered segments (JSON lines; JSON text in a CSV cell). */
  transcript: jsonArray.pipe(z.array(segmentSchema)).nullish(),
});
export type CallRecord = z.output<typeof callRecordSchema>;
