import { sql } from "drizzle-orm";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database, Sql } from "../db/client.ts";
import { recomputeSaleCounts } from "../ingest/recompute-sale-counts.ts";
import { replaceIcpCriteria } from "../queries/replace-icp-criteria.ts";
import { EVENT_COLUMNS } from "../queries/upsert-event.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { Catalog } from "./catalog.ts";
import { contactCount, type DemoParams, generateCatalog, generateContacts } from "./generate.ts";
import type { ContactBundle } from "./rows.ts";

export interface DemoProgress {
  phase: string;
  done: number;
  total: number;
}

export interface WriteDemoOptions {
  /** Seals the pixels' (fake) access tokens; without it, pixels are stored with no token. */
  secrets?: SecretBox;
  /** When given, a small WAV recording is stored there for every call, at the call's `audio_path`. */
  files?: ObjectStore;
  progress?: (p: DemoProgress) => void;
}

export interface WrittenDemo {
  contacts: number;
  events: number;
  touchpoints: number;
  calls: number;
}

/** Rows per INSERT statement (one `jsonb_to_recordset` parameter each). */
const ROWS_PER_STATEMENT = 1_000;
/** Contacts per transaction: a few thousand rows of every table, committed together. */
const CONTACTS_PER_TRANSACTION = 1_000;
/** Transactions in flight at once on PostgreSQL (the pool holds 10 connections). */
const PARALLEL_TRANSACTIONS = 4;

/** `[column, SQL type]`; names and types are constants of this file, never input. */
type Columns = readonly (readonly [string, string])[];

/**
 * `insert into <table> (account_id, cols…) select <account>, cols… from jsonb_to_recordset($1)`, in
 * statements of ROWS_PER_STATEMENT rows: the house style for set-based writes.
 */
async function insertRows(
  tx: Sql,
  accountId: string,
  table: string,
  columns: Columns,
  rows: readonly object[],
  /** `[column, SQL literal]` written the same on every row (constants of this file). */
  constants: Columns = [],
): Promise<void> {
  const names = columns.map(([name]) => `"${name}"`).join(", ");
  const definitions = columns.map(([name, type]) => `"${name}" ${type}`).join(", ");
  const constantNames = constants.map(([name]) => `, "${name}"`).join("");
  const constantValues = constants.map(([, value]) => `, ${value}`).join("");
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const batch = JSON.stringify(rows.slice(i, i + ROWS_PER_STATEMENT));
    await tx.execute(sql`
      insert into ${sql.raw(table)} (account_id, ${sql.raw(names)}${sql.raw(constantNames)})
      select ${accountId}, ${sql.raw(names)}${sql.raw(constantValues)}
      from jsonb_to_recordset(${batch}::jsonb) as r(${sql.raw(definitions)})`);
  }
}

const REP_COLUMNS: Columns = [
  ["id", "text"],
  ["name", "text"],
  ["email", "text"],
];
const AD_COLUMNS: Columns = [
  ["platform", "text"],
  ["ad_id", "text"],
  ["ad_name", "text"],
  ["adset_id", "text"],
  ["adset_name", "text"],
  ["campaign_id", "text"],
  ["campaign_name", "text"],
  ["is_excluded", "boolean"],
];
const SPEND_COLUMNS: Columns = [
  ["platform", "text"],
  ["ad_id", "text"],
  ["spend_date", "date"],
  ["spend", "numeric"],
  ["clicks", "int"],
  ["impressions", "int"],
  ["reach", "int"],
  ["currency", "text"],
];
const GOAL_COLUMNS: Columns = [
  ["period", "date"],
  ["metric_key", "text"],
  ["target_value", "numeric"],
];
const PIXEL_COLUMNS: Columns = [
  ["id", "uuid"],
  ["platform", "text"],
  ["pixel_id", "text"],
  ["name", "text"],
  ["is_default", "boolean"],
  ["access_token_sealed", "text"],
  ["routing", "jsonb"],
];
const CREATIVE_COLUMNS: Columns = [
  ["id", "uuid"],
  ["external_ref", "text"],
  ["is_published", "boolean"],
  ["angle", "text"],
  ["primary_text", "text"],
  ["headline", "text"],
  ["hook", "text"],
  ["cta", "text"],
  ["destination_url", "text"],
  ["asset_url", "text"],
  ["asset_kind", "text"],
  ["variant_label", "text"],
  ["visual_subtype", "text"],
  ["funnel", "text"],
  ["product", "text"],
  ["audience", "text"],
  ["video_script", "text"],
  ["source", "jsonb"],
  ["score", "numeric"],
  ["created_at", "timestamptz"],
];
const CREATIVE_REQUEST_COLUMNS: Columns = [
  ["id", "uuid"],
  ["reason", "text"],
  ["status", "text"],
  ["requested_count", "int"],
  ["filled_count", "int"],
  ["context", "jsonb"],
  ["created_at", "timestamptz"],
  ["notified_at", "timestamptz"],
];
const AD_RULE_COLUMNS: Columns = [
  ["id", "uuid"],
  ["label", "text"],
  ["rule_type", "text"],
  ["platform", "text"],
  ["campaign_id", "text"],
  ["campaign_name", "text"],
  ["enabled", "boolean"],
  ["dry_run", "boolean"],
  ["params", "jsonb"],
  ["last_run_at", "timestamptz"],
  ["created_at", "timestamptz"],
];
const AD_RULE_RUN_COLUMNS: Columns = [
  ["id", "uuid"],
  ["rule_id", "uuid"],
  ["ran_at", "timestamptz"],
  ["dry_run", "boolean"],
  ["status", "text"],
  ["actions", "jsonb"],
  ["summary", "text"],
];
const CONTACT_COLUMNS: Columns = [
  ["id", "uuid"],
  ["email", "text"],
  ["phone", "text"],
  ["first_name", "text"],
  ["last_name", "text"],
  ["name", "text"],
  ["tags", "text[]"],
  ["form_titles", "text[]"],
  ["form_response", "jsonb"],
  ["assigned_user_name", "text"],
  ["value", "numeric"],
  ["created_at", "timestamptz"],
];
/** The ingestion path's columns, less what the demo writes as constants or leaves to defaults. */
const DEMO_EVENT_COLUMNS: Columns = EVENT_COLUMNS.filter(
  ([name]) => name !== "origin" && name !== "payload_hash" && name !== "utm_enriched",
);
const TOUCHPOINT_COLUMNS: Columns = [
  ["id", "uuid"],
  ["external_id", "text"],
  ["contact_id", "uuid"],
  ["visitor_id", "text"],
  ["session_id", "text"],
  ["kind", "text"],
  ["event_type", "text"],
  ["occurred_at", "timestamptz"],
  ["url", "text"],
  ["referrer", "text"],
  ["utm", "jsonb"],
  ["ad_ids", "jsonb"],
  ["click_ids", "jsonb"],
  ["channel", "text"],
  ["platform", "text"],
  ["is_paid", "boolean"],
  ["value", "numeric"],
  ["currency", "text"],
  ["product", "text"],
  ["event_id", "text"],
  ["resolution", "text"],
  ["resolved_platform", "text"],
  ["resolved_ad_id", "text"],
];
const PURCHASE_COLUMNS: Columns = [
  ["id", "text"],
  ["contact_id", "uuid"],
  ["purchase_date", "timestamptz"],
  ["product_key", "text"],
  ["product_name", "text"],
  ["contact_email", "text"],
  ["contact_name", "text"],
  ["amount", "numeric"],
  ["currency", "text"],
  ["commissionable", "boolean"],
  ["commission_rate", "numeric"],
  ["commission_amount", "numeric"],
  ["invoice_id", "text"],
];
const CUSTOMER_COLUMNS: Columns = [
  ["id", "uuid"],
  ["contact_id", "uuid"],
  ["commission_status", "text"],
  ["commission_expires_at", "timestamptz"],
  ["created_at", "timestamptz"],
];
const CALL_COLUMNS: Columns = [
  ["external_id", "text"],
  ["starts_at", "timestamptz"],
  ["title", "text"],
  ["duration_sec", "int"],
  ["call_analysis_id", "text"],
  ["summary", "text"],
  ["call_type", "text"],
  ["is_qualified", "boolean"],
  ["icp_fit_score", "numeric"],
  ["qualification_reasoning", "text"],
  ["next_step_type", "text"],
  ["next_step_summary", "text"],
  ["next_step_proposed", "text"],
  ["scorecard_total", "numeric"],
  ["rep_id", "text"],
  ["markers", "jsonb"],
  ["participant_emails", "text[]"],
  ["audio_path", "text"],
  ["audio_content_type", "text"],
  ["video_path", "text"],
];

async function writeCatalog(tx: Sql, accountId: string, catalog: Catalog, secrets?: SecretBox) {
  await insertRows(tx, accountId, "reps", REP_COLUMNS, catalog.reps);
  await insertRows(tx, accountId, "ads", AD_COLUMNS, catalog.ads);
  await insertRows(tx, accountId, "ad_spend_daily", SPEND_COLUMNS, catalog.spend);
  await replaceIcpCriteria(tx, accountId, { criteria: catalog.icp });
  await insertRows(tx, accountId, "kpi_goals", GOAL_COLUMNS, catalog.goals);
  const pixels = catalog.pixels.map(({ access_token, ...pixel }) => ({
    ...pixel,
    // Same context as the pixel import: a sealed token does not open in another row or account.
    access_token_sealed: secrets
      ? secrets.seal(access_token, `pixel:${accountId}:${pixel.platform}:${pixel.pixel_id}`)
      : null,
  }));
  await insertRows(tx, accountId, "pixels", PIXEL_COLUMNS, pixels);
  await insertRows(tx, accountId, "creatives", CREATIVE_COLUMNS, catalog.creatives);
  await insertRows(tx, accountId, "creative_requests", CREATIVE_REQUEST_COLUMNS, catalog.creativeRequests);
  await insertRows(tx, accountId, "ad_rules", AD_RULE_COLUMNS, catalog.adRules);
  await insertRows(tx, accountId, "ad_rule_runs", AD_RULE_RUN_COLUMNS, catalog.adRuleRuns);
}

interface CallFile {
  audio_path: string;
  audio_content_type: string;
  video_path: string | null;
}

async function writeContacts(
  tx: Sql,
  accountId: string,
  bundles: readonly ContactBundle[],
): Promise<CallFile[]> {
  const calls = bundles.flatMap((b) =>
    b.calls.map(({ audio_file, video_file, ...call }) => ({
      ...call,
      audio_path: audio_file,
      video_path: video_file,
    })),
  );
  await insertRows(
    tx,
    accountId,
    "contacts",
    CONTACT_COLUMNS,
    bundles.map((b) => b.contact),
  );
  await insertRows(
    tx,
    accountId,
    "events",
    DEMO_EVENT_COLUMNS,
    bundles.flatMap((b) => b.events),
    [["origin", "'demo'"]],
  );
  await insertRows(
    tx,
    accountId,
    "touchpoints",
    TOUCHPOINT_COLUMNS,
    bundles.flatMap((b) => b.touchpoints),
  );
  await insertRows(
    tx,
    accountId,
    "purchases",
    PURCHASE_COLUMNS,
    bundles.flatMap((b) => b.purchases),
  );
  await insertRows(
    tx,
    accountId,
    "customers",
    CUSTOMER_COLUMNS,
    bundles.flatMap((b) => (b.customer ? [b.customer] : [])),
  );
  await insertRows(tx, accountId, "calls", CALL_COLUMNS, calls);
  // Transcript segments name their call by external id; the artifact id is the database's own.
  const segments = bundles.flatMap((b) => b.segments);
  for (let i = 0; i < segments.length; i += ROWS_PER_STATEMENT) {
    const batch = JSON.stringify(segments.slice(i, i + ROWS_PER_STATEMENT));
    await tx.execute(sql`
      insert into call_transcript_segments (account_id, artifact_id, idx, start_ms, end_ms, speaker_id,
                                            speaker_label, speaker_email, text, confidence)
      select ${accountId}, c.artifact_id, s.idx, s.start_ms, s.end_ms, s.speaker_id, s.speaker_label,
             s.speaker_email, s.text, s.confidence
      from jsonb_to_recordset(${batch}::jsonb)
        as s(call_external_id text, idx int, start_ms int, end_ms int, speaker_id text, speaker_label text,
             speaker_email text, text text, confidence numeric)
      join calls c on c.account_id = ${accountId} and c.external_id = s.call_external_id`);
  }
  return calls;
}

/**
 * Writes the demo data set into an existing account: the catalog in one transaction, then the contacts
 * streamed from the generator, CONTACTS_PER_TRANSACTION at a time (memory stays bounded at any scale),
 * then sale counting over the account. Ad resolution was computed by the generator.
 */
export async function writeDemo(
  db: Database,
  accountId: string,
  params: DemoParams,
  options: WriteDemoOptions = {},
): Promise<WrittenDemo> {
  const progress = options.progress ?? (() => {});
  const catalog = generateCatalog(params);
  progress({ phase: "catalog", done: 0, total: 1 });
  await db.admin(accountId, (tx) => writeCatalog(tx, accountId, catalog, options.secrets));
  progress({ phase: "catalog", done: 1, total: 1 });

  const total = contactCount(params);
  const written: WrittenDemo = { contacts: 0, events: 0, touchpoints: 0, calls: 0 };
  let pending: ContactBundle[] = [];
  const flush = async (bundles: ContactBundle[]) => {
    const calls = await db.admin(accountId, (tx) => writeContacts(tx, accountId, bundles));
    if (options.files) await storeDemoRecordings(options.files, accountId, calls);
    written.contacts += bundles.length;
    for (const b of bundles) {
      written.events += b.events.length;
      written.touchpoints += b.touchpoints.length;
    }
    written.calls += calls.length;
    progress({ phase: "contacts", done: written.contacts, total });
  };
  // Batches are independent (a call's segments travel with it): on PostgreSQL several commit at once.
  // A job never rejects; the first failure is kept and rethrown once every job has settled.
  const parallel = db.kind === "postgres" ? PARALLEL_TRANSACTIONS : 1;
  const inFlight = new Set<Promise<void>>();
  const failures: unknown[] = [];
  const launch = async (bundles: ContactBundle[]) => {
    const job: Promise<void> = flush(bundles).then(
      () => {
        inFlight.delete(job);
      },
      (error: unknown) => {
        failures.push(error);
        inFlight.delete(job);
      },
    );
    inFlight.add(job);
    if (inFlight.size >= parallel) await Promise.race(inFlight);
  };
  progress({ phase: "contacts", done: 0, total });
  for (const bundle of generateContacts(params, catalog)) {
    pending.push(bundle);
    if (pending.length >= CONTACTS_PER_TRANSACTION) {
      await launch(pending);
      pending = [];
      if (failures.length > 0) break;
    }
  }
  if (pending.length > 0 && failures.length === 0) await launch(pending);
  await Promise.all(inFlight);
  if (failures.length > 0) throw failures[0];

  progress({ phase: "sale counting", done: 0, total: 1 });
  await db.admin(accountId, (tx) => recomputeSaleCounts(tx, accountId));
  progress({ phase: "sale counting", done: 1, total: 1 });
  return written;
}

/**
 * A small valid WAV: `durationMs` of a sine tone, PCM 16-bit, 8 kHz, mono. The tone's pitch varies
 * with `n` so recordings are not all the same file.
 */
export function demoWav(n: number, durationMs = 400): Buffer {
  const rate = 8_000;
  const samples = Math.round((rate * durationMs) / 1000);
  const data = samples * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + data, 4);
  wav.write("WAVE", 8, "ascii");
  wav.write("fmt ", 12, "ascii");
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(data, 40);
  const frequency = 300 + (n % 8) * 60;
  for (let i = 0; i < samples; i++) {
    // Fade in and out over 20 ms so the tone does not click.
    const edge = Math.min(1, i / 160, (samples - i) / 160);
    wav.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / rate) * 8_000 * edge), 44 + i * 2);
  }
  return wav;
}

/** Stores a WAV at each call's `audio_path` in the account's folder. */
export async function storeDemoRecordings(
  files: ObjectStore,
  accountId: string,
  calls: readonly { audio_path: string | null }[],
): Promise<number> {
  let written = 0;
  for (const [i, call] of calls.entries()) {
    if (!call.audio_path) continue;
    const n = Number(/(\d+)\.wav$/.exec(call.audio_path)?.[1] ?? i);
    await files.put(accountId, call.audio_path, demoWav(n));
    written += 1;
  }
  return written;
}
