/**
 * The import suites' files (bench/import.ts, bench/import-live.ts): the demo generator's ads as a
 * spend file and its CRM events as an events file, as a CRM exports them. See bench/README.md, "Import".
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateCatalog, generateContacts } from "../src/demo/generate.ts";
import type { EventRow } from "../src/demo/rows.ts";

// The files: the demo generator's ads (as a spend file) and CRM events (as an events file).

/** Fields of a stored event that a CRM does not send (computed by ingestion). */
const COMPUTED = new Set(["contact_id", "resolution", "resolved_platform", "resolved_ad_id"]);

/** The event as a CRM sends it: no computed fields, absent rather than null. */
function crmRecord(e: EventRow, i: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (COMPUTED.has(k) || v === null || (k === "is_baseline" && v === false)) continue;
    out[k] = v;
  }
  // Some CRMs send the email as typed: identity resolution must still find one contact.
  if (i % 7 === 3 && typeof out.contact_email === "string")
    out.contact_email = ` ${out.contact_email.toUpperCase()}`;
  return out;
}

export interface Files {
  spend: string;
  events: string;
  eventCount: number;
  spendRows: number;
  contacts: number;
  byType: Record<string, number>;
  withAdId: number;
  withUtmContentOnly: number;
  withoutUtm: number;
}

/**
 * Writes the spend and events files in `dir`; `limit` keeps the first events in time order (a file of
 * an exact size).
 */
export function writeFiles(dir: string, options: { seed: number; scale: number; limit?: number }): Files {
  const today = "2026-01-15";
  const params = { seed: options.seed, days: 90, scale: options.scale, today };
  const catalog = generateCatalog(params);
  const ads = new Map(catalog.ads.map((a) => [`${a.platform}\u0000${a.ad_id}`, a]));
  const spendLines = catalog.spend.map((s) => {
    const ad = ads.get(`${s.platform}\u0000${s.ad_id}`);
    return JSON.stringify({
      platform: s.platform,
      ad_id: s.ad_id,
      ad_name: ad?.ad_name ?? s.ad_id,
      campaign_id: ad?.campaign_id,
      campaign_name: ad?.campaign_name,
      adset_id: ad?.adset_id,
      adset_name: ad?.adset_name,
      date: s.spend_date,
      total_spend: s.spend,
      total_clicks: s.clicks,
      total_impressions: s.impressions,
      total_reach: s.reach,
      currency: s.currency,
    });
  });
  const events: EventRow[] = [];
  let contacts = 0;
  for (const bundle of generateContacts(params, catalog)) {
    contacts += 1;
    events.push(...bundle.events);
  }
  // A CRM export is in time order: a contact's events fall in different batches.
  events.sort((a, b) => a.event_datetime.localeCompare(b.event_datetime) || a.id.localeCompare(b.id));
  if (options.limit !== undefined) events.length = Math.min(events.length, options.limit);
  const byType: Record<string, number> = {};
  let withAdId = 0;
  let withUtmContentOnly = 0;
  let withoutUtm = 0;
  for (const e of events) {
    byType[e.event_type] = (byType[e.event_type] ?? 0) + 1;
    if (e.utm_ad_id || e.meta_ad_id) withAdId += 1;
    else if (e.utm_content) withUtmContentOnly += 1;
    else if (!e.utm_source && !e.utm_campaign) withoutUtm += 1;
  }
  const spend = join(dir, "spend.jsonl");
  const eventsFile = join(dir, "events.jsonl");
  writeFileSync(spend, `${spendLines.join("\n")}\n`);
  writeFileSync(eventsFile, `${events.map((e, i) => JSON.stringify(crmRecord(e, i))).join("\n")}\n`);
  return {
    spend,
    events: eventsFile,
    eventCount: events.length,
    spendRows: spendLines.length,
    contacts,
    byType,
    withAdId,
    withUtmContentOnly,
    withoutUtm,
  };
}
