import { z } from "zod";
import {
  DAY_RANGE_MESSAGE,
  dayInRange,
  INSTANT_RANGE_MESSAGE,
  instantInRange,
} from "../reports/date-range.ts";

export const EVENT_TYPES = [
  "lead",
  "application",
  "booking",
  "no_show",
  "sale",
  "cancel",
  "payment",
  "sale_lost",
] as const;

const text = (max: number) => z.string().trim().max(max).nullish();
/** Platform ids are strings end to end: a JSON number may already have lost digits (Meta ids exceed 2^53). */
const platformId = z
  .string({ error: "must be a string (platform ids exceed 2^53 as numbers)" })
  .trim()
  .max(64)
  .nullish();
const money = z.number().finite().min(-1e12).max(1e12).nullish();
const datetime = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date-time with a time zone", abort: true })
  .refine(instantInRange, INSTANT_RANGE_MESSAGE);

/**
 * A CRM event as a CRM, form or payment tool sends it (the spec's event resource). Unknown fields
 * are ignored: tools send much more than we keep. Computed fields (counted, group_key, …) are ours.
 */
export const crmEventSchema = z.object({
  id: z.string().trim().min(1).max(200),
  event_type: z.enum(EVENT_TYPES),
  /** `qualified` (application), `marketing` or `follow_up` (booking). */
  event_subtype: z.enum(["qualified", "marketing", "follow_up"]).nullish(),
  event_datetime: datetime,
  contact_email: text(320),
  contact_name: text(200),
  contact_phone: text(40),
  value: money,
  amount: money,
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
    .nullish(),
  product_key: text(200),
  product_name: text(200),
  assigned_user_name: text(200),
  is_paid: z.boolean().nullish(),
  payment_status: z.enum(["paid", "pending", "failed", "refunded", "disputed"]).nullish(),
  booking_date: z.iso.date({ abort: true }).refine(dayInRange, DAY_RANGE_MESSAGE).nullish(),
  booking_time: z
    .string()
    .regex(/^\d{2}:\d{2}(:\d{2})?$/, "must be HH:MM")
    .nullish(),
  utm_source: text(500),
  utm_medium: text(500),
  utm_campaign: text(500),
  utm_content: text(500),
  utm_term: text(500),
  utm_campaign_id: platformId,
  utm_adset_id: platformId,
  utm_ad_id: platformId,
  campaign_name: text(500),
  calendar_name: text(200),
  meta_ad_id: platformId,
  is_baseline: z.boolean().nullish(),
  cancelled_at: datetime.nullish(),
});

export type CrmEvent = z.output<typeof crmEventSchema>;
