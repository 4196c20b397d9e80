import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { DEMO_TIMEZONE, seedDemo, todayIn } from "../../src/admin/demo.ts";
import { isUnresolvedMacro } from "../../src/attribution/ad-resolution.ts";
import { type Database, rows } from "../../src/db/client.ts";
import { generateCatalog, generateDemo, planDemo } from "../../src/demo/generate.ts";
import { demoWav, storeDemoRecordings } from "../../src/demo/write.ts";
import { backend, createTestFiles, openTestDatabase, testSecrets } from "../helpers/harness.ts";

const TODAY = "2026-03-15";
const PARAMS = { seed: 7, days: 90, scale: 1, today: TODAY };

/** Checks a RIFF/WAVE header: PCM, mono, 8 kHz, 16-bit, data size consistent with the file. */
function assertWav(bytes: Buffer) {
  assert.equal(bytes.toString("ascii", 0, 4), "RIFF");
  assert.equal(bytes.readUInt32LE(4), bytes.length - 8);
  assert.equal(bytes.toString("ascii", 8, 12), "WAVE");
  assert.equal(bytes.toString("ascii", 12, 16), "fmt ");
  assert.equal(bytes.readUInt16LE(20), 1, "PCM");
  assert.equal(bytes.readUInt16LE(22), 1, "mono");
  assert.equal(bytes.readUInt32LE(24), 8_000, "8 kHz");
  assert.equal(bytes.readUInt16LE(34), 16, "16-bit");
  assert.equal(bytes.toString("ascii", 36, 40), "data");
  assert.equal(bytes.readUInt32LE(40), bytes.length - 44);
  const ms = (bytes.readUInt32LE(40) / 2 / 8_000) * 1000;
  assert.ok(ms >= 100 && ms <= 2_000, `a few hundred ms of audio, got ${ms}`);
}

// Nothing here reads a database: the PostgreSQL leg of CI (DATABASE_URL set) would only repeat it,
// and planning scale 100 alone costs about 30 s of CPU.
describe("demo generator (no database)", { skip: backend === "postgres" && "no database: run once" }, () => {
  test("demo determinism (same seed, same rows): same seed and today give deep-equal rows", () => {
    const a = generateDemo(PARAMS);
    const b = generateDemo(PARAMS);
    assert.deepEqual(a, b);
    const other = generateDemo({ ...PARAMS, seed: 8 });
    assert.notDeepEqual(other.contacts, a.contacts);
    assert.notDeepEqual(other.catalog.ads, a.catalog.ads);
  });

  test("the window ends before today and spans the requested days", () => {
    const { catalog, contacts } = generateDemo({ ...PARAMS, days: 30, scale: 0.2 });
    const dates = new Set(catalog.spend.map((s) => s.spend_date));
    assert.equal(dates.size, 30);
    assert.equal([...dates].sort().at(-1), "2026-03-14");
    for (const b of contacts) {
      for (const e of b.events) assert.ok(e.event_datetime < `${TODAY}T00:00:00.000Z`, e.event_datetime);
    }
  });

  test("scale 100 reaches a million CRM events (counted by streaming, nothing kept)", () => {
    const plan = planDemo({ seed: 1, days: 90, scale: 100, today: TODAY });
    assert.ok(plan.contacts >= 200_000, `contacts ${plan.contacts}`);
    assert.ok(plan.events >= 1_000_000, `events ${plan.events}`);
    assert.ok(plan.tracked_events > plan.events);
  });

  test("platform ids are strings of the platform's shape", () => {
    const { ads } = generateCatalog(PARAMS);
    assert.equal(ads.length, 40);
    assert.deepEqual([...new Set(ads.map((a) => a.platform))].sort(), ["google", "meta", "tiktok"]);
    assert.equal(new Set(ads.map((a) => a.campaign_id)).size, 8);
    for (const ad of ads) {
      assert.equal(typeof ad.ad_id, "string");
      if (ad.platform === "meta") assert.match(ad.ad_id, /^\d{18}$/);
      else assert.match(ad.ad_id, /^\d{10,19}$/);
    }
  });

  test("storeDemoRecordings stores a valid small WAV at each call's audio path", async () => {
    const files = createTestFiles();
    const account = "00000000-0000-4000-8000-000000000001";
    const written = await storeDemoRecordings(files, account, [
      { audio_path: "calls/0000001.wav" },
      { audio_path: "calls/0000002.wav" },
    ]);
    assert.equal(written, 2);
    const first = await readFile(join(files.root, account, "calls/0000001.wav"));
    assertWav(first);
    assert.notDeepEqual(first, await readFile(join(files.root, account, "calls/0000002.wav")));
    assert.deepEqual(first, demoWav(1));
  });

  test("todayIn gives the calendar date of the timezone", () => {
    assert.equal(todayIn(DEMO_TIMEZONE, new Date("2026-06-30T22:30:00Z")), "2026-07-01");
    assert.equal(todayIn("UTC", new Date("2026-06-30T22:30:00Z")), "2026-06-30");
  });
});

describe("seedDemo on a database", () => {
  let db: Database & { url: string | null };
  let accountId = "";
  let secondAccountId = "";
  const files = createTestFiles();
  const phases = new Set<string>();

  before(async () => {
    // The service's default statement timeout (15 s), as `ascribe demo` runs: one of the seed's
    // transactions writes 1,000 contacts' touchpoints in one statement with its triggers, and with a
    // CI leg's test files sharing two cores it once ran past the tests' 5 s.
    db = await openTestDatabase({ statementTimeoutMs: 15_000 });
    const seeded = await seedDemo(db, { seed: PARAMS.seed }, (p) => phases.add(p.phase), {
      today: TODAY,
      secrets: testSecrets,
      files,
    });
    accountId = seeded.account_id;
    assert.match(seeded.key, /\S{20,}/);
    assert.match(seeded.client_key, /^ck_/);
    secondAccountId = (await seedDemo(db, { seed: PARAMS.seed }, undefined, { today: TODAY })).account_id;
  });

  after(async () => {
    await db.close();
  });

  const query = <T>(account: string, q: ReturnType<typeof sql>) => db.admin(account, (tx) => rows<T>(tx, q));
  const count = async (q: ReturnType<typeof sql>) => (await query<{ n: number }>(accountId, q))[0]?.n ?? -1;

  test("reports progress by phase", () => {
    assert.deepEqual([...phases].sort(), ["catalog", "contacts", "sale counting"]);
  });

  test("demo determinism (same seed, same rows): two accounts seeded alike hold the same rows", async () => {
    const digest = async (account: string) =>
      query<{ table: string; digest: string; n: number }>(
        account,
        sql`
          select 'events' as table, count(*)::int as n,
                 md5(string_agg(concat_ws('|', id, contact_id, event_type, event_subtype, event_datetime, amount,
                   value, payment_status, utm_content, utm_ad_id, resolution, resolved_ad_id, counted,
                   drop_reason, group_key, contact_seq, cancelled_at), ',' order by id)) as digest
          from events where account_id = ${account}
          union all
          select 'touchpoints', count(*)::int, md5(string_agg(concat_ws('|', id, contact_id, kind, event_type,
                   occurred_at, utm::text, ad_ids::text, resolution, resolved_ad_id), ',' order by id))
          from touchpoints where account_id = ${account}
          union all
          select 'contacts', count(*)::int, md5(string_agg(concat_ws('|', id, email, name, tags::text, value),
                   ',' order by id))
          from contacts where account_id = ${account}
          union all
          select 'calls', count(*)::int, md5(string_agg(concat_ws('|', external_id, starts_at, summary, rep_id),
                   ',' order by external_id))
          from calls where account_id = ${account}
          union all
          select 'spend', count(*)::int, md5(string_agg(concat_ws('|', ad_id, spend_date, spend),
                   ',' order by ad_id, spend_date))
          from ad_spend_daily where account_id = ${account}`,
      );
    const first = await digest(accountId);
    assert.deepEqual(await digest(secondAccountId), first);
    const plan = planDemo(PARAMS);
    const byTable = Object.fromEntries(first.map((r) => [r.table, r.n]));
    assert.equal(byTable.events, plan.events);
    assert.equal(byTable.touchpoints, plan.touchpoints);
    assert.equal(byTable.contacts, plan.contacts);
  });

  test("account, catalog and spend", async () => {
    const [account] = await query<{ timezone: string; currency: string; plan: string }>(
      accountId,
      sql`select timezone, currency, plan from accounts where id = ${accountId}`,
    );
    assert.deepEqual(account, { timezone: "Europe/Paris", currency: "EUR", plan: "business" });
    const [ads] = await query<{ platforms: number; campaigns: number; adsets: number; ads: number }>(
      accountId,
      sql`select count(distinct platform)::int as platforms, count(distinct campaign_id)::int as campaigns,
                 count(distinct adset_id)::int as adsets, count(*)::int as ads
          from ads where account_id = ${accountId}`,
    );
    assert.deepEqual(ads, { platforms: 3, campaigns: 8, adsets: 16, ads: 40 });
    const [spend] = await query<{ days: number; rows: number; total: number }>(
      accountId,
      sql`select count(distinct spend_date)::int as days, count(*)::int as rows, sum(spend)::float8 as total
          from ad_spend_daily where account_id = ${accountId}`,
    );
    assert.equal(spend?.days, 90);
    assert.equal(spend?.rows, 40 * 90);
    assert.ok((spend?.total ?? 0) > 10_000);
    assert.equal(await count(sql`select count(*)::int as n from reps where account_id = ${accountId}`), 5);
    const meta = await count(
      sql`select count(*)::int as n from ads where account_id = ${accountId} and platform = 'meta' and ad_id !~ '^[0-9]{18}$'`,
    );
    assert.equal(meta, 0);
  });

  test("contacts and their journeys", async () => {
    const contacts = await count(
      sql`select count(*)::int as n from contacts where account_id = ${accountId}`,
    );
    assert.ok(contacts >= 1_800 && contacts <= 2_200, `contacts ${contacts}`);
    assert.equal(
      await count(
        sql`select count(*)::int as n from contacts where account_id = ${accountId} and email !~ '^[a-z]+\\.[a-z]+\\.[0-9]+@demo\\.example$'`,
      ),
      0,
    );
    const kinds = await query<{ kind: string; n: number }>(
      accountId,
      sql`select kind, count(*)::int as n from touchpoints where account_id = ${accountId} group by kind order by kind`,
    );
    assert.deepEqual(
      kinds.map((k) => k.kind),
      ["conversion", "web"],
    );
    // Journeys mix ad clicks with email and organic touches.
    const channels = await query<{ channel: string }>(
      accountId,
      sql`select distinct channel from touchpoints where account_id = ${accountId} and kind = 'web' and channel is not null`,
    );
    for (const c of ["paid_social", "paid_search", "email", "organic_search"]) {
      assert.ok(
        channels.some((r) => r.channel === c),
        c,
      );
    }
    const mixed = await count(sql`
      select count(*)::int as n from (
        select contact_id from touchpoints
        where account_id = ${accountId} and kind = 'web' and contact_id is not null
        group by contact_id
        having count(distinct resolved_ad_id) >= 2 and bool_or(channel in ('email', 'organic_search'))
      ) c`);
    assert.ok(mixed > 10, `contacts with several ad clicks and an email or organic touch: ${mixed}`);
    assert.ok(
      (await count(
        sql`select count(*)::int as n from touchpoints where account_id = ${accountId} and contact_id is null`,
      )) > 0,
    );
    // Every CRM event is a conversion touchpoint.
    const orphans = await count(sql`
      select count(*)::int as n from events e
      where e.account_id = ${accountId}
        and not exists (select 1 from touchpoints t where t.account_id = e.account_id and t.external_id = 'event:' || e.id)`);
    assert.equal(orphans, 0);
  });

  test("the funnel: every event type, resolution outcomes, macros", async () => {
    const types = await query<{ event_type: string }>(
      accountId,
      sql`select distinct event_type from events where account_id = ${accountId} order by 1`,
    );
    assert.deepEqual(
      types.map((t) => t.event_type),
      ["application", "booking", "cancel", "lead", "no_show", "payment", "sale", "sale_lost"],
    );
    const subtypes = await query<{ s: string }>(
      accountId,
      sql`select distinct event_type || ':' || coalesce(event_subtype, '') as s from events
          where account_id = ${accountId} and event_type in ('application', 'booking') order by 1`,
    );
    assert.deepEqual(
      subtypes.map((r) => r.s),
      ["application:", "application:qualified", "booking:follow_up", "booking:marketing"],
    );
    const resolutions = await query<{ resolution: string; n: number }>(
      accountId,
      sql`select resolution, count(*)::int as n from events where account_id = ${accountId} group by 1 order by 1`,
    );
    assert.deepEqual(
      resolutions.map((r) => r.resolution),
      ["by_name", "exact", "unresolved"],
    );
    for (const r of resolutions) assert.ok(r.n > 50, `${r.resolution}: ${r.n}`);
    const macros = await query<{ utm_content: string }>(
      accountId,
      sql`select distinct utm_content from events where account_id = ${accountId} and resolution = 'unresolved'
          and utm_content is not null`,
    );
    assert.ok(macros.some((m) => m.utm_content === "{{ad.name}}"));
    assert.ok(
      macros.some((m) => !isUnresolvedMacro(m.utm_content)),
      "unknown names too",
    );
    const ids = await count(
      sql`select count(*)::int as n from events where account_id = ${accountId} and id !~ '^demo-ev-[0-9]{7}$'`,
    );
    assert.equal(ids, 0);
    const cancelled = await count(
      sql`select count(*)::int as n from events where account_id = ${accountId} and event_type = 'booking' and cancelled_at is not null`,
    );
    assert.ok(cancelled > 0);
  });

  test("sale counting applied; refunds and disputes present", async () => {
    const outcome = await query<{ counted: boolean | null; drop_reason: string | null; n: number }>(
      accountId,
      sql`select counted, drop_reason, count(*)::int as n from events
          where account_id = ${accountId} and event_type in ('sale', 'payment')
          group by 1, 2 order by 1, 2`,
    );
    const has = (counted: boolean, reason: string | null) =>
      outcome.some((o) => o.counted === counted && o.drop_reason === reason && o.n > 0);
    assert.ok(has(true, null), "counted sales");
    assert.ok(has(false, "duplicate"), "duplicates (installments, double entries)");
    assert.ok(has(false, "baseline"), "baseline customers");
    assert.ok(has(false, "cancelled"), "cancelled sales");
    assert.ok(!outcome.some((o) => o.counted === null), "every sale-type event was counted or dropped");
    const statuses = await query<{ payment_status: string }>(
      accountId,
      sql`select distinct payment_status from events where account_id = ${accountId} and event_type = 'payment'`,
    );
    for (const s of ["paid", "refunded", "disputed", "failed"]) {
      assert.ok(
        statuses.some((r) => r.payment_status === s),
        s,
      );
    }
  });

  test("customers, purchases and commissions", async () => {
    const [c] = await query<{ customers: number; purchases: number; commissionable: number; active: number }>(
      accountId,
      sql`select (select count(*)::int from customers where account_id = ${accountId}) as customers,
                 (select count(*)::int from purchases where account_id = ${accountId}) as purchases,
                 (select count(*)::int from purchases where account_id = ${accountId} and commissionable) as commissionable,
                 (select count(*)::int from customers where account_id = ${accountId} and commission_status = 'active') as active`,
    );
    assert.ok((c?.customers ?? 0) > 50);
    assert.ok((c?.purchases ?? 0) > (c?.customers ?? 0));
    assert.ok((c?.commissionable ?? 0) > 0);
    assert.ok((c?.active ?? 0) > 0);
  });

  test("analyzed calls with transcripts and recordings", async () => {
    const calls = await query<{
      audio_path: string;
      audio_content_type: string;
      video_path: string | null;
      segments: number;
    }>(
      accountId,
      sql`select c.audio_path, c.audio_content_type, c.video_path,
                 (select count(*)::int from call_transcript_segments s
                  where s.account_id = c.account_id and s.artifact_id = c.artifact_id) as segments
          from calls c where c.account_id = ${accountId} order by c.external_id`,
    );
    assert.ok(calls.length > 200, `calls ${calls.length}`);
    for (const call of calls) {
      assert.match(call.audio_path, /^calls\/\d{7}\.wav$/);
      assert.equal(call.audio_content_type, "audio/wav");
      assert.ok(call.segments >= 6, "a transcript");
    }
    // The demo has no video files.
    assert.ok(calls.every((c) => c.video_path === null));
    const first = calls[0];
    assert.ok(first);
    assertWav(await readFile(join(files.root, accountId, first.audio_path)));
    const reps = await count(
      sql`select count(distinct rep_id)::int as n from calls where account_id = ${accountId} and rep_id in (select id from reps where account_id = ${accountId})`,
    );
    assert.equal(reps, 5);
  });

  test("creative needs, pixels, goals, ICP, ad rules with runs", async () => {
    const statuses = await query<{ status: string }>(
      accountId,
      sql`select distinct status from creative_requests where account_id = ${accountId} order by 1`,
    );
    assert.ok(statuses.some((s) => s.status === "open"));
    assert.ok(statuses.some((s) => s.status === "partial"));
    assert.ok(
      (await count(sql`select count(*)::int as n from creatives where account_id = ${accountId}`)) > 0,
    );

    const pixels = await query<{
      platform: string;
      pixel_id: string;
      sealed: string | null;
      is_default: boolean;
    }>(
      accountId,
      sql`select platform, pixel_id, access_token_sealed as sealed, is_default from pixels where account_id = ${accountId}`,
    );
    assert.equal(pixels.length, 3);
    assert.equal(pixels.filter((p) => p.is_default).length, 1);
    const plaintext = new Map(generateCatalog(PARAMS).pixels.map((p) => [p.pixel_id, p.access_token]));
    for (const p of pixels) {
      const token = plaintext.get(p.pixel_id);
      assert.ok(token && p.sealed);
      assert.ok(!p.sealed.includes(token), "never the plaintext");
      assert.equal(testSecrets.open(p.sealed, `pixel:${accountId}:${p.platform}:${p.pixel_id}`), token);
    }
    // Seeded without a secret box: pixels exist, with no token.
    const unsealed = await query<{ n: number }>(
      secondAccountId,
      sql`select count(*)::int as n from pixels where account_id = ${secondAccountId} and access_token_sealed is null`,
    );
    assert.equal(unsealed[0]?.n, 3);

    assert.ok(
      (await count(sql`select count(*)::int as n from kpi_goals where account_id = ${accountId}`)) >= 5,
    );
    assert.equal(
      await count(sql`select count(*)::int as n from icp_criteria where account_id = ${accountId}`),
      1,
    );

    const rules = await query<{
      enabled: boolean;
      dry_run: boolean;
      runs: number;
      last_run_at: string | null;
    }>(
      accountId,
      sql`select r.enabled, r.dry_run, r.last_run_at::text,
                 (select count(*)::int from ad_rule_runs x where x.account_id = r.account_id and x.rule_id = r.id) as runs
          from ad_rules r where r.account_id = ${accountId}`,
    );
    assert.ok(rules.length >= 3);
    assert.ok(rules.some((r) => r.dry_run) && rules.some((r) => !r.dry_run));
    for (const r of rules) {
      if (r.enabled) assert.ok(r.runs > 0 && r.last_run_at !== null);
      else assert.equal(r.runs, 0);
    }
  });
});
