import { z } from "zod";
import { DAY_RANGE_MESSAGE, dayInRange } from "../reports/date-range.ts";

const platformId = z
  .string({ error: "must be a string (platform ids exceed 2^53 as numbers)" })
  .trim()
  .min(1)
  .max(64);
const count = z.number().int().min(0).max(2_000_000_000).nullish();

/** One day of one ad's spend: the spec's ad spend row plus `date`. Identity: platform + ad_id + date. */
export const spendRowSchema = z.object({
  platform: z.string().trim().toLowerCase().min(1).max(40),
  ad_id: platformId,
  ad_name: z.string().trim().min(1).max(500),
  campaign_id: platformId.nullish(),
  campaign_name: z.string().trim().max(500).nullish(),
  adset_id: platformId.nullish(),
  adset_name: z.string().trim().max(500).nullish(),
  date: z.iso.date({ abort: true }).refine(dayInRange, DAY_RANGE_MESSAGE),
  total_spend: z.number().finite().min(0).max(1e10),
  total_clicks: count,
  total_impressions: count,
  total_reach: count,
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
    .nullish(),
});

export type SpendRow = z.output<typeof spendRowSchema>;
