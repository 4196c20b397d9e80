import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { CallRecord, CreativeRequestRecord, RuleRecord } from "../ingest/import-records.ts";

type Outcome = "inserted" | "updated" | "unchanged";

function outcome(found: { inserted: boolean }[]): Outcome {
  const row = found[0];
  return !row ? "unchanged" : row.inserted ? "inserted" : "updated";
}

export async function upsertCreativeRequest(
  db: Sql,
  accountId: string,
  r: CreativeRequestRecord,
): Promise<Outcome> {
  const written = await rows<{ inserted: boolean }>(
    db,
    sql`
      insert into creative_requests (account_id, id, reason, status, requested_count, filled_count, context,
                                     created_at, notified_at)
      values (${accountId}, ${r.id}, ${r.reason}, ${r.status}, ${r.requested_count}, ${r.filled_count ?? 0},
              ${r.context ? JSON.stringify(r.context) : null}::jsonb, coalesce(${r.created_at ?? null}::timestamptz, now()),
              ${r.notified_at ?? null})
      on conflict (account_id, id) do update set
        reason = excluded.reason, status = excluded.status, requested_count = excluded.requested_count,
        filled_count = excluded.filled_count, context = excluded.context, notified_at = excluded.notified_at
      where (creative_requests.reason, creative_requests.status, creative_requests.requested_count,
             creative_requests.filled_count, creative_requests.context, creative_requests.notified_at)
        is distinct from (excluded.reason, excluded.status, excluded.requested_count, excluded.filled_count,
             excluded.context, excluded.notified_at)
      returning (xmax = 0) as inserted`,
  );
  return outcome(written);
}

export async function upsertRule(db: Sql, accountId: string, r: RuleRecord): Promise<Outcome> {
  const written = await rows<{ inserted: boolean }>(
    db,
    sql`
      insert into ad_rules (account_id, id, label, rule_type, platform, campaign_id, campaign_name, enabled, dry_run, params)
      values (${accountId}, ${r.id}, ${r.label}, ${r.rule_type}, ${r.platform ?? null}, ${r.campaign_id ?? null},
              ${r.campaign_name ?? null}, ${r.enabled ?? true}, ${r.dry_run ?? true},
              ${JSON.stringify(r.params ?? {})}::jsonb)
      on conflict (account_id, id) do update set
        label = excluded.label, rule_type = excluded.rule_type, platform = excluded.platform,
        campaign_id = excluded.campaign_id, campaign_name = excluded.campaign_name, enabled = excluded.enabled,
        dry_run = excluded.dry_run, params = excluded.params, updated_at = now()
      where (ad_rules.label, ad_rules.rule_type, ad_rules.platform, ad_rules.campaign_id, ad_rules.campaign_name,
             ad_rules.enabled, ad_rules.dry_run, ad_rules.params)
        is distinct from (excluded.label, excluded.rule_type, excluded.platform, excluded.campaign_id,
             excluded.campaign_name, excluded.enabled, excluded.dry_run, excluded.params)
      returning (xmax = 0) as inserted`,
  );
  return outcome(written);
}

export interface ImportedTouch {
  externalId: string;
  contactId: string | null;
  visitorId: string | null;
  sessionId: string | null;
  kind: "web" | "conversion";
  eventType: string;
  occurredAt: string;
  url: string | null;
  referrer: string | null;
  utm: Record<string, string>;
  adIds: Record<string, string>;
  clickIds: Record<string, string>;
  channel: string | null;
  isPaid: boolean;
  value: number | null;
  currency: string | null;
  product: string | null;
  resolution: "exact" | "by_name" | "unresolved";
  resolvedPlatform: string | null;
  resolvedAdId: string | null;
}

export async function upsertImportedTouchpoint(
  db: Sql,
  accountId: string,
  t: ImportedTouch,
): Promise<Outcome> {
  const written = await rows<{ inserted: boolean }>(
    db,
    sql`
      insert into touchpoints (account_id, id, external_id, contact_id, visitor_id, session_id, kind, event_type,
                               occurred_at, url, referrer, utm, ad_ids, click_ids, channel, is_paid, value, currency,
                               product, is_imported, resolution, resolved_platform, resolved_ad_id)
      values (${accountId}, ${randomUUID()}, ${t.externalId}, ${t.contactId}, ${t.visitorId}, ${t.sessionId}, ${t.kind},
              ${t.eventType}, ${t.occurredAt}, ${t.url}, ${t.referrer}, ${JSON.stringify(t.utm)}::jsonb,
              ${JSON.stringify(t.adIds)}::jsonb, ${JSON.stringify(t.clickIds)}::jsonb, ${t.channel}, ${t.isPaid},
              ${t.value}, ${t.currency}, ${t.product}, true, ${t.resolution}, ${t.resolvedPlatform}, ${t.resolvedAdId})
      on conflict (account_id, external_id) where external_id is not null do update set
        contact_id = excluded.contact_id, visitor_id = excluded.visitor_id, session_id = excluded.session_id,
        kind = excluded.kind, event_type = excluded.event_type, occurred_at = excluded.occurred_at, url = excluded.url,
        referrer = excluded.referrer, utm = excluded.utm, ad_ids = excluded.ad_ids, click_ids = excluded.click_ids,
        channel = excluded.channel, is_paid = excluded.is_paid, value = excluded.value, currency = excluded.currency,
        product = excluded.product, resolution = excluded.resolution, resolved_platform = excluded.resolved_platform,
        resolved_ad_id = excluded.resolved_ad_id
      where (touchpoints.contact_id, touchpoints.visitor_id, touchpoints.session_id, touchpoints.kind,
             touchpoints.event_type, touchpoints.occurred_at, touchpoints.url, touchpoints.referrer, touchpoints.utm,
             touchpoints.ad_ids, touchpoints.click_ids, touchpoints.channel, touchpoints.is_paid, touchpoints.value,
             touchpoints.currency, touchpoints.product, touchpoints.resolution, touchpoints.resolved_ad_id)
        is distinct from (excluded.contact_id, excluded.visitor_id, excluded.session_id, excluded.kind,
             excluded.event_type, excluded.occurred_at, excluded.url, excluded.referrer, excluded.utm,
             excluded.ad_ids, excluded.click_ids, excluded.channel, excluded.is_paid, excluded.value,
             excluded.currency, excluded.product, excluded.resolution, excluded.resolved_ad_id)
      returning (xmax = 0) as inserted`,
  );
  return outcome(written);
}

/** The sealed token of a pixel, if stored (so a replay of the same token keeps its seal). */
export async function pixelToken(db: Sql, accountId: string, params: { platform: string; pixelId: string }) {
  const found = await rows<{ sealed: string | null }>(
    db,
    sql`select access_token_sealed as sealed from pixels
        where account_id = ${accountId} and platform = ${params.platform} and pixel_id = ${params.pixelId}`,
  );
  return found[0]?.sealed ?? null;
}

export async function upsertPixel(
  db: Sql,
  accountId: string,
  p: {
    platform: string;
    pixelId: string;
    name: string | null;
    isDefault: boolean;
    sealedToken: string | null;
    routing: object;
  },
): Promise<Outcome> {
  if (p.isDefault) {
    // One default pixel per account.
    await db.execute(sql`
      update pixels set is_default = false, updated_at = now()
      where account_id = ${accountId} and is_default and not (platform = ${p.platform} and pixel_id = ${p.pixelId})`);
  }
  const written = await rows<{ inserted: boolean }>(
    db,
    sql`
      insert into pixels (account_id, id, platform, pixel_id, name, is_default, access_token_sealed, routing)
      values (${accountId}, ${randomUUID()}, ${p.platform}, ${p.pixelId}, ${p.name}, ${p.isDefault}, ${p.sealedToken},
              ${JSON.stringify(p.routing)}::jsonb)
      on conflict (account_id, platform, pixel_id) do update set
        name = excluded.name, is_default = excluded.is_default, access_token_sealed = excluded.access_token_sealed,
        routing = excluded.routing, updated_at = now()
      where (pixels.name, pixels.is_default, pixels.access_token_sealed, pixels.routing)
        is distinct from (excluded.name, excluded.is_default, excluded.access_token_sealed, excluded.routing)
      returning (xmax = 0) as inserted`,
  );
  return outcome(written);
}

export async function upsertCall(db: Sql, accountId: string, c: CallRecord): Promise<Outcome> {
  const participants = (c.participant_emails ?? []).map((e) => e.trim().toLowerCase()).filter(Boolean);
  const written = await rows<{ inserted: boolean; artifact_id: number }>(
    db,
    sql`
      insert into calls (account_id, external_id, starts_at, title, duration_sec, call_analysis_id, summary, call_type,
                         is_qualified, icp_fit_score, qualification_reasoning, next_step_type, next_step_summary,
                         next_step_proposed, scorecard_total, rep_id, markers, participant_emails)
      values (${accountId}, ${c.id}, ${c.starts_at}, ${c.title ?? null}, ${c.duration_sec ?? null},
              ${c.call_analysis_id ?? null}, ${c.summary ?? null}, ${c.call_type ?? null}, ${c.is_qualified ?? null},
              ${c.icp_fit_score ?? null}, ${c.qualification_reasoning ?? null}, ${c.next_step_type ?? null},
              ${c.next_step_summary ?? null}, ${c.next_step_proposed ?? null}, ${c.scorecard_total ?? null},
              ${c.rep_id ?? null}, ${JSON.stringify(c.markers ?? [])}::jsonb,
              (select coalesce(array_agg(e), '{}') from jsonb_array_elements_text(${JSON.stringify(participants)}::jsonb) e))
      on conflict (account_id, external_id) do update set
        starts_at = excluded.starts_at, title = excluded.title, duration_sec = excluded.duration_sec,
        call_analysis_id = excluded.call_analysis_id, summary = excluded.summary, call_type = excluded.call_type,
        is_qualified = excluded.is_qualified, icp_fit_score = excluded.icp_fit_score,
        qualification_reasoning = excluded.qualification_reasoning, next_step_type = excluded.next_step_type,
        next_step_summary = excluded.next_step_summary, next_step_proposed = excluded.next_step_proposed,
        scorecard_total = excluded.scorecard_total, rep_id = excluded.rep_id, markers = excluded.markers,
        participant_emails = excluded.participant_emails, updated_at = now()
      where (calls.starts_at, calls.title, calls.duration_sec, calls.call_analysis_id, calls.summary, calls.call_type,
             calls.is_qualified, calls.icp_fit_score, calls.qualification_reasoning, calls.next_step_type,
             calls.next_step_summary, calls.next_step_proposed, calls.scorecard_total, calls.rep_id, calls.markers,
             calls.participant_emails)
        is distinct from (excluded.starts_at, excluded.title, excluded.duration_sec, excluded.call_analysis_id,
             excluded.summary, excluded.call_type, excluded.is_qualified, excluded.icp_fit_score,
             excluded.qualification_reasoning, excluded.next_step_type, excluded.next_step_summary,
             excluded.next_step_proposed, excluded.scorecard_total, excluded.rep_id, excluded.markers,
             excluded.participant_emails)
      returning (xmax = 0) as inserted, artifact_id`,
  );
  let result = outcome(written);
  if (c.transcript) {
    const artifactId = (
      await rows<{ artifact_id: number }>(
        db,
        sql`select artifact_id from calls where account_id = ${accountId} and external_id = ${c.id}`,
      )
    )[0]?.artifact_id;
    // Compared as stored (confidence keeps three decimals): an identical transcript writes nothing.
    const incoming = c.transcript.map((s, idx) => ({
      idx,
      start_ms: s.start_ms,
      end_ms: s.end_ms,
      speaker_id: s.speaker_id ?? null,
      speaker_label: s.speaker_label ?? null,
      speaker_email: s.speaker_email ?? null,
      text: s.text,
      confidence:
        s.confidence === null || s.confidence === undefined ? null : Math.round(s.confidence * 1000) / 1000,
    }));
    const stored = await rows<(typeof incoming)[number]>(
      db,
      sql`select idx, start_ms, end_ms, speaker_id, speaker_label, speaker_email, text, confidence::float8 as confidence
          from call_transcript_segments where account_id = ${accountId} and artifact_id = ${artifactId}
          order by idx`,
    );
    if (JSON.stringify(stored) !== JSON.stringify(incoming)) {
      await db.execute(
        sql`delete from call_transcript_segments where account_id = ${accountId} and artifact_id = ${artifactId}`,
      );
      await db.execute(sql`
        insert into call_transcript_segments (account_id, artifact_id, idx, start_ms, end_ms, speaker_id, speaker_label,
                                              speaker_email, text, confidence)
        select ${accountId}, ${artifactId}, s.idx, s.start_ms, s.end_ms, s.speaker_id, s.speaker_label, s.speaker_email,
               s.text, s.confidence
        from jsonb_to_recordset(${JSON.stringify(incoming)}::jsonb)
          as s(idx int, start_ms int, end_ms int, speaker_id text, speaker_label text, speaker_email text, text text,
               confidence numeric)`);
      if (result === "unchanged") result = "updated";
    }
  }
  return result;
}
