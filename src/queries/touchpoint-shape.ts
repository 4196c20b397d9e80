import { sql } from "drizzle-orm";
import { isoMs } from "./sql-format.ts";

/** The spec's UTM object: every field, null when it was not captured. */
const UTM_FIELDS = [
  "source",
  "medium",
  "campaign",
  "content",
  "term",
  "campaign_name",
  "adset_name",
  "ad_name",
  "channel",
  "type",
  "sequence",
  "step",
] as const;

/** The ad ids a touchpoint can carry (strings: DESIGN §6). */
const AD_ID_FIELDS = ["ad_id", "adset_id", "campaign_id", "meta_ad_id"] as const;

/** The UTM object as sent: every field present. */
export type UtmObject = Record<(typeof UTM_FIELDS)[number], string | null>;

/** The ad ids as sent: every field present. */
export type AdIdsObject = Record<(typeof AD_ID_FIELDS)[number], string | null>;

/** A JSON object of `fields` read from a jsonb column; names are constants, never input. */
const objectOf = (column: string, fields: readonly string[]) =>
  sql.raw(`jsonb_build_object(${fields.map((f) => `'${f}', ${column} ->> '${f}'`).join(", ")})`);

/** `utm` of touchpoints `t` as the spec's UTM object. */
export const utmObject = (t: string) => objectOf(`${t}.utm`, UTM_FIELDS);

/** `ad_ids` of touchpoints `t`, every id field present. */
export const adIdsObject = (t: string) => objectOf(`${t}.ad_ids`, AD_ID_FIELDS);

/** A touchpoint's ad platform: as captured, else that of the ad it resolved to. */
export const touchPlatform = (t: string) => sql.raw(`coalesce(${t}.platform, ${t}.resolved_platform)`);

/**
 * The spec's contact object of contacts `c`: first and last name as given, else the contact's
 * name split at its first space (imports and forms often give one name field only).
 */
export const contactObject = (c: string) =>
  sql.raw(`jsonb_build_object('email', ${c}.email, 'phone', ${c}.phone,
    'first_name', coalesce(${c}.first_name, nullif(split_part(btrim(${c}.name), ' ', 1), '')),
    'last_name', coalesce(${c}.last_name,
      nullif(btrim(substr(btrim(${c}.name), nullif(strpos(btrim(${c}.name), ' '), 0) + 1)), '')))`);

/** A point of a journey or of the feed: touchpoints `t`, their contact `c` (left joined). */
export const TOUCHPOINT_COLUMNS = sql`
  t.account_id,
  t.id::text as id,
  ${isoMs(sql`t.occurred_at`)} as occurred_at,
  t.kind,
  t.event_type,
  c.email as contact_email,
  t.visitor_id,
  t.session_id,
  t.url,
  t.referrer,
  ${utmObject("t")} as utm,
  ${adIdsObject("t")} as ad_ids,
  t.click_ids,
  t.channel,
  ${touchPlatform("t")} as platform,
  t.is_paid,
  t.value::float8 as value,
  t.currency,
  t.product,
  t.is_imported,
  t.resolution,
  t.resolved_platform,
  t.resolved_ad_id`;

export interface TouchpointRow {
  account_id: string;
  id: string;
  occurred_at: string;
  kind: "web" | "conversion";
  event_type: string;
  contact_email: string | null;
  visitor_id: string | null;
  session_id: string | null;
  url: string | null;
  referrer: string | null;
  utm: UtmObject;
  ad_ids: AdIdsObject;
  click_ids: Record<string, string>;
  channel: string | null;
  platform: string | null;
  is_paid: boolean;
  value: number | null;
  currency: string | null;
  product: string | null;
  is_imported: boolean;
  resolution: string;
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}
