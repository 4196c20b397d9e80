import type { EventRecord } from "../queries/upsert-event.ts";
/*
 * The demo data set as plain rows, one interface per table. Field names are the column names, so the
 * writer hands them to `jsonb_to_recordset` unchanged; timestamps are ISO 8601 strings, dates
 * YYYY-MM-DD, platform ids strings. `account_id` is added by the writer.
 */

export type Resolution = "exact" | "by_name" | "unresolved";

export interface RepRow {
  id: string;
  name: string;
  email: string;
}

export interface AdRow {
  platform: string;
  ad_id: string;
  ad_name: string;
  adset_id: string;
  adset_name: string;
  campaign_id: string;
  campaign_name: string;
  is_excluded: boolean;
}

export interface SpendRow {
  platform: string;
  ad_id: string;
  spend_date: string;
  spend: number;
  clicks: number;
  impressions: number;
  reach: number;
  currency: string;
}

export interface GoalRow {
  period: string;
  metric_key: string;
  target_value: number;
}

export interface PixelRow {
  id: string;
  platform: string;
  pixel_id: string;
  name: string;
  is_default: boolean;
  /** A fake token, in plaintext here; the writer seals it and never stores this value. */
  access_token: string;
  routing: Record<string, unknown>;
}

export interface AdRuleRow {
  id: string;
  label: string;
  rule_type: string;
  platform: string | null;
  campaign_id: string | null;
  campaign_name: string | null;
  enabled: boolean;
  dry_run: boolean;
  params: Record<string, unknown>;
  last_run_at: string | null;
  created_at: string;
}

export interface AdRuleRunRow {
  id: string;
  rule_id: string;
  ran_at: string;
  dry_run: boolean;
  status: string;
  actions: Record<string, unknown>[];
  summary: string;
}

export interface CreativeRow {
  id: string;
  external_ref: string;
  is_published: boolean;
  angle: string;
  primary_text: string;
  headline: string;
  hook: string;
  cta: string;
  destination_url: string;
  asset_url: string;
  asset_kind: "image" | "video";
  variant_label: string;
  visual_subtype: string;
  funnel: string;
  product: string;
  audience: string;
  video_script: string | null;
  source: Record<string, unknown>;
  score: number;
  created_at: string;
}

export interface CreativeRequestRow {
  id: string;
  reason: string;
  status: "open" | "partial" | "filled" | "cancelled";
  requested_count: number;
  filled_count: number;
  context: Record<string, unknown>;
  created_at: string;
  notified_at: string | null;
}

export interface ContactRow {
  id: string;
  email: string;
  phone: string | null;
  first_name: string;
  last_name: string;
  name: string;
  tags: string[];
  form_titles: string[];
  form_response: Record<string, unknown> | null;
  assigned_user_name: string | null;
  value: number | null;
  created_at: string;
}

export type EventType =
  | "lead"
  | "application"
  | "booking"
  | "no_show"
  | "sale"
  | "cancel"
  | "payment"
  | "sale_lost";

/** An event as the ingestion path stores it, less what the demo writer sets itself. */
export type EventRow = Omit<
  EventRecord,
  "origin" | "payload_hash" | "utm_enriched" | "event_type" | "resolution"
> & {
  event_type: EventType;
  resolution: Resolution;
};

export interface TouchpointRow {
  id: string;
  external_id: string | null;
  contact_id: string | null;
  visitor_id: string;
  session_id: string | null;
  kind: "web" | "conversion";
  event_type: string;
  occurred_at: string;
  url: string | null;
  referrer: string | null;
  utm: Record<string, string>;
  ad_ids: Record<string, string>;
  click_ids: Record<string, string>;
  channel: string | null;
  platform: string | null;
  is_paid: boolean;
  value: number | null;
  currency: string | null;
  product: string | null;
  event_id: string | null;
  resolution: Resolution;
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}

export interface PurchaseRow {
  id: string;
  contact_id: string;
  purchase_date: string;
  product_key: string;
  product_name: string;
  contact_email: string;
  contact_name: string;
  amount: number;
  currency: string;
  commissionable: boolean;
  commission_rate: number | null;
  commission_amount: number | null;
  invoice_id: string;
}

export interface CustomerRow {
  id: string;
  contact_id: string;
  commission_status: string | null;
  commission_expires_at: string | null;
  created_at: string;
}

export interface CallRow {
  external_id: string;
  starts_at: string;
  title: string;
  duration_sec: number;
  call_analysis_id: string;
  summary: string;
  call_type: string;
  is_qualified: boolean;
  icp_fit_score: number;
  qualification_reasoning: string;
  next_step_type: string;
  next_step_summary: string;
  next_step_proposed: string;
  scorecard_total: number;
  rep_id: string;
  markers: { ts: number; label: string; status: string }[];
  participant_emails: string[];
  /** The recording's path inside the account's folder of the object store: `calls/<n>.wav`. */
  audio_file: string;
  audio_content_type: string;
  video_file: string | null;
}

export interface SegmentRow {
  call_external_id: string;
  idx: number;
  start_ms: number;
  end_ms: number;
  speaker_id: string;
  speaker_label: string;
  speaker_email: string;
  text: string;
  confidence: number;
}

/** Everything that belongs to one contact (plus anonymous visits of the same moment). */
export interface ContactBundle {
  contact: ContactRow;
  events: EventRow[];
  touchpoints: TouchpointRow[];
  purchases: PurchaseRow[];
  customer: CustomerRow | null;
  calls: CallRow[];
  segments: SegmentRow[];
}

/** The account-level part: catalog, settings and administration records. */
export interface DemoCatalog {
  reps: RepRow[];
  ads: AdRow[];
  spend: SpendRow[];
  icp: Record<string, unknown>;
  goals: GoalRow[];
  pixels: PixelRow[];
  creatives: CreativeRow[];
  creativeRequests: CreativeRequestRow[];
  adRules: AdRuleRow[];
  adRuleRuns: AdRuleRunRow[];
}
