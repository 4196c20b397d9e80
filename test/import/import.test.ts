import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { runImport } from "../../src/import/run-import.ts";
import { openTestDatabase, seedAccount, testSecrets } from "../helpers/harness.ts";

let db: Database;
let dir: string;
before(async () => {
  db = await openTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "ascribe-import-"));
});
after(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const count = (accountId: string, table: "events" | "ads" | "ad_spend_daily" | "contacts") =>
  db
    .admin(accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from ${sql.identifier(table)} where account_id = ${accountId}`,
      ),
    )
    .then((r) => r[0]?.n);

describe("ascribe import", () => {
  test("events from JSON lines: bad lines reported by number, the good ones land, a replay changes nothing", async () => {
    const { accountId } = await seedAccount(db);
    const path = file(
      "events.jsonl",
      [
        '{"id":"e1","event_type":"lead","event_datetime":"2026-01-05T09:00:00Z","contact_email":"a@example.com"}',
        "{not json",
        '{"id":"e2","event_type":"sale","event_datetime":"2026-01-06T09:00:00Z","contact_email":"a@example.com","amount":990}',
        '{"id":"e3","event_type":"booking","event_datetime":"yesterday"}',
        "",
        '{"id":"e4","event_type":"booking","event_datetime":"2026-01-07T09:00:00+01:00","meta_ad_id":"120210000000000001"}',
        "[1,2]",
      ].join("\n"),
    );
    const first = await runImport(db, testSecrets, { kind: "events", account: accountId, file: path });
    assert.deepEqual(first, {
      imported: 3,
      updated: 0,
      skipped: 0,
      errors: [
        { line: 2, error: "not valid JSON" },
        { line: 4, error: "event_datetime: must be an ISO 8601 date-time with a time zone" },
        { line: 7, error: "not a JSON object" },
      ],
    });
    const replay = await runImport(db, testSecrets, { kind: "events", account: accountId, file: path });
    assert.deepEqual(
      { ...replay, errors: replay.errors.length },
      { imported: 0, updated: 0, skipped: 3, errors: 3 },
    );
    assert.equal(await count(accountId, "events"), 3);
  });

  test("events from CSV: numbers and booleans converted, empty cells absent, a changed row updates", async () => {
    const { accountId } = await seedAccount(db);
    const csv = (amount: string) =>
      file(
        "events.csv",
        [
          "id,event_type,event_datetime,contact_email,amount,is_paid,product_key",
          `s1,sale,2026-02-01T10:00:00Z,b@example.com,${amount},true,`,
          "s2,payment,2026-02-02T10:00:00Z,b@example.com,abc,yes,coaching",
        ].join("\r\n"),
      );
    const first = await runImport(db, testSecrets, {
      kind: "events",
      account: accountId,
      file: csv("1500.50"),
    });
    assert.deepEqual(first, {
      imported: 1,
      updated: 0,
      skipped: 0,
      errors: [{ line: 3, error: "amount: Invalid input: expected number, received string" }],
    });
    const again = await runImport(db, testSecrets, { kind: "events", account: accountId, file: csv("1600") });
    assert.deepEqual(
      { imported: again.imported, updated: again.updated, skipped: again.skipped },
      { imported: 0, updated: 1, skipped: 0 },
    );
    const [stored] = await db.admin(accountId, (tx) =>
      rows<{ amount: number; is_paid: boolean; product_key: string | null }>(
        tx,
        sql`select amount::float8 as amount, is_paid, product_key from events where account_id = ${accountId}`,
      ),
    );
    assert.deepEqual(stored, { amount: 1600, is_paid: true, product_key: null });
  });

  test("spend: ads created from the rows, identity platform + ad_id + date, the last duplicate in a file wins", async () => {
    const { accountId } = await seedAccount(db);
    const path = file(
      "spend.csv",
      [
        "platform,ad_id,ad_name,campaign_id,campaign_name,adset_id,adset_name,date,total_spend,total_clicks,total_impressions,total_reach",
        "meta,120210000000000001,Video A,120200000000000001,Spring,120230000000000001,Broad,2026-01-01,100.5,10,1000,800",
        "meta,120210000000000002,Carousel B,120200000000000001,Spring,120230000000000001,Broad,2026-01-01,50,5,500,400",
        "meta,120210000000000001,Video A,120200000000000001,Spring,120230000000000001,Broad,2026-01-01,120,12,1200,900",
        "google,987,Search 1,55,Brand,,,2026-01-01,-3,1,1,1",
      ].join("\n"),
    );
    const result = await runImport(db, testSecrets, { kind: "spend", account: accountId, file: path });
    assert.deepEqual(result, {
      imported: 2,
      updated: 0,
      skipped: 1,
      errors: [{ line: 5, error: "total_spend: Too small: expected number to be >=0" }],
    });
    const stored = await db.admin(accountId, (tx) =>
      rows<{ ad_id: string; spend: number; clicks: number }>(
        tx,
        sql`select ad_id, spend::float8 as spend, clicks from ad_spend_daily where account_id = ${accountId} order by ad_id`,
      ),
    );
    assert.deepEqual(stored, [
      { ad_id: "120210000000000001", spend: 120, clicks: 12 },
      { ad_id: "120210000000000002", spend: 50, clicks: 5 },
    ]);
    assert.equal(await count(accountId, "ads"), 2);
    const replay = await runImport(db, testSecrets, { kind: "spend", account: accountId, file: path });
    assert.deepEqual(
      { imported: replay.imported, updated: replay.updated, skipped: replay.skipped },
      { imported: 0, updated: 0, skipped: 3 },
    );
  });

  test("an unknown kind or a file of unknown format is refused with a clear message", async () => {
    const { accountId } = await seedAccount(db);
    await assert.rejects(
      runImport(db, testSecrets, { kind: "widgets", account: accountId, file: file("x.jsonl", "") }),
      /unknown kind widgets \(supported: events, spend, touchpoints, purchases, creative-requests, rules, calls, pixels\)/,
    );
    await assert.rejects(
      runImport(db, testSecrets, { kind: "events", account: accountId, file: file("x.txt", "") }),
      /unknown format/,
    );
  });

  test("every file in examples/ imports without an error", async () => {
    const { accountId } = await seedAccount(db);
    const examples = fileURLToPath(new URL("../../examples/", import.meta.url));
    const results: Record<string, unknown> = {};
    const files = [
      "spend.csv",
      "spend.jsonl",
      "events.jsonl",
      "events.csv",
      "touchpoints.jsonl",
      "touchpoints.csv",
      "purchases.csv",
      "purchases.jsonl",
      "creative-requests.jsonl",
      "rules.jsonl",
      "rules.csv",
      "calls.jsonl",
      "pixels.jsonl",
    ];
    for (const name of files) {
      const kind = name.split(".")[0] ?? "";
      results[name] = await runImport(db, testSecrets, {
        kind,
        account: accountId,
        file: join(examples, name),
      });
    }
    assert.deepEqual(results, {
      "spend.csv": { imported: 3, updated: 0, skipped: 0, errors: [] },
      "spend.jsonl": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "events.jsonl": { imported: 5, updated: 0, skipped: 0, errors: [] },
      "events.csv": { imported: 3, updated: 0, skipped: 0, errors: [] },
      "touchpoints.jsonl": { imported: 3, updated: 0, skipped: 0, errors: [] },
      "touchpoints.csv": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "purchases.csv": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "purchases.jsonl": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "creative-requests.jsonl": { imported: 2, updated: 0, skipped: 0, errors: [] },
      "rules.jsonl": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "rules.csv": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "calls.jsonl": { imported: 1, updated: 0, skipped: 0, errors: [] },
      "pixels.jsonl": { imported: 2, updated: 0, skipped: 0, errors: [] },
    });
    // Replaying every file changes nothing.
    for (const name of files) {
      const kind = name.split(".")[0] ?? "";
      const again = await runImport(db, testSecrets, {
        kind,
        account: accountId,
        file: join(examples, name),
      });
      assert.equal(again.imported + again.updated, 0, name);
    }
    const checks = await db.admin(accountId, (tx) =>
      rows<Record<string, unknown>>(
        tx,
        sql`select
          (select count(*)::int from customers where account_id = ${accountId}) as customers,
          (select commission_status from customers c join contacts k on k.account_id = c.account_id and k.id = c.contact_id
            where c.account_id = ${accountId} and k.email = 'ann.martin@example.com') as ann_commission,
          (select resolution from touchpoints where account_id = ${accountId} and external_id = 'tp-0001') as tp1_resolution,
          (select is_paid from touchpoints where account_id = ${accountId} and external_id = 'tp-0002') as tp2_paid,
          (select contact_id is null from touchpoints where account_id = ${accountId} and external_id = 'tp-0003') as tp3_anonymous,
          (select params->>'step' from ad_rules where account_id = ${accountId} and label = 'Scale winners by 20%') as rule_step,
          (select enabled from ad_rules where account_id = ${accountId} and label = 'Scale winners by 20%') as rule_enabled,
          (select count(*)::int from creative_requests where account_id = ${accountId} and notified_at is null) as unnotified,
          (select count(*)::int from call_transcript_segments where account_id = ${accountId}) as segments,
          (select participant_emails from calls where account_id = ${accountId}) as participants,
          (select bool_and(access_token_sealed like 'v1.test.%' and access_token_sealed not like '%example-not-a-real%')
             from pixels where account_id = ${accountId}) as tokens_sealed`,
      ),
    );
    assert.deepEqual(checks, [
      {
        customers: 2,
        ann_commission: "active",
        tp1_resolution: "exact",
        tp2_paid: false,
        tp3_anonymous: true,
        rule_step: "0.2",
        rule_enabled: false,
        unnotified: 1,
        segments: 2,
        participants: ["julie@coach.example", "ann.martin@example.com"],
        tokens_sealed: true,
      },
    ]);
    const [resolved] = await db.admin(accountId, (tx) =>
      rows<{ resolution: string; resolved_ad_id: string }>(
        tx,
        sql`select resolution, resolved_ad_id from events where account_id = ${accountId} and id = 'crm-1001'`,
      ),
    );
    assert.deepEqual(resolved, { resolution: "exact", resolved_ad_id: "120210000000000001" });
  });
});

test("events stored before their ads are resolved once the spend import brings the ads", async () => {
  const { accountId } = await seedAccount(db);
  const events = file(
    "early.jsonl",
    [
      '{"id":"a","event_type":"lead","event_datetime":"2026-03-01T10:00:00Z","utm_ad_id":"120210000000000001"}',
      '{"id":"b","event_type":"lead","event_datetime":"2026-03-01T10:00:00Z","utm_content":"carousel b"}',
      '{"id":"c","event_type":"lead","event_datetime":"2026-03-01T10:00:00Z","utm_content":"Nothing Known"}',
    ].join("\n"),
  );
  await runImport(db, testSecrets, { kind: "events", account: accountId, file: events });
  const resolutions = () =>
    db.admin(accountId, (tx) =>
      rows<{ id: string; resolution: string; resolved_ad_id: string | null }>(
        tx,
        sql`select coalesce(e.id, t.event_id) as id, t.resolution, t.resolved_ad_id
            from touchpoints t left join events e on e.account_id = t.account_id and e.id = t.event_id
            where t.account_id = ${accountId}
            union all
            select 'event:' || id, resolution, resolved_ad_id from events where account_id = ${accountId}
            order by 1`,
      ),
    );
  assert.ok((await resolutions()).every((r) => r.resolution === "unresolved"));
  const spendFile = fileURLToPath(new URL("../../examples/spend.csv", import.meta.url));
  await runImport(db, testSecrets, { kind: "spend", account: accountId, file: spendFile });
  assert.deepEqual(await resolutions(), [
    { id: "a", resolution: "exact", resolved_ad_id: "120210000000000001" },
    { id: "b", resolution: "by_name", resolved_ad_id: "120210000000000002" },
    { id: "c", resolution: "unresolved", resolved_ad_id: null },
    { id: "event:a", resolution: "exact", resolved_ad_id: "120210000000000001" },
    { id: "event:b", resolution: "by_name", resolved_ad_id: "120210000000000002" },
    { id: "event:c", resolution: "unresolved", resolved_ad_id: null },
  ]);
});

test("for every kind, a bad line is reported and the good one lands; a changed record is updated", async () => {
  const { accountId } = await seedAccount(db);
  const cases: { kind: string; good: object; bad: object; error: string; change: object }[] = [
    {
      kind: "touchpoints",
      good: {
        id: "t1",
        kind: "web",
        event_type: "page_view",
        occurred_at: "2026-03-01T10:00:00Z",
        visitor_id: "v1",
      },
      bad: { id: "t2", kind: "visit", event_type: "page_view", occurred_at: "2026-03-01T10:00:00Z" },
      error: 'kind: Invalid option: expected one of "web"|"conversion"',
      change: { url: "https://example.com/" },
    },
    {
      kind: "purchases",
      good: { id: "p1", purchase_date: "2026-03-01T10:00:00Z", contact_email: "p@example.com", amount: 10 },
      bad: { id: "p2", purchase_date: "2026-03-01T10:00:00Z", contact_email: "nobody", amount: 10 },
      error: "contact_email: not a valid email address",
      change: { amount: 12 },
    },
    {
      kind: "creative-requests",
      good: { id: "11111111-1111-4111-8111-111111111111", reason: "r", status: "open", requested_count: 2 },
      bad: { id: "nope", reason: "r", status: "open", requested_count: 2 },
      error: "id: Invalid UUID",
      change: { status: "partial", filled_count: 1 },
    },
    {
      kind: "rules",
      good: { id: "22222222-2222-4222-8222-222222222222", label: "l", rule_type: "pause_cpl_above" },
      bad: { id: "22222222-2222-4222-8222-222222222223", rule_type: "pause_cpl_above" },
      error: "label: Invalid input: expected string, received undefined",
      change: { dry_run: false },
    },
    {
      kind: "calls",
      good: {
        id: "c1",
        starts_at: "2026-03-01T10:00:00Z",
        transcript: [{ start_ms: 0, end_ms: 10, text: "Hello" }],
      },
      bad: { id: "c2", starts_at: "2026-03-01T10:00:00Z", transcript: [{ start_ms: 0, text: "Hi" }] },
      error: "transcript[0].end_ms: Invalid input: expected number, received undefined",
      change: { transcript: [{ start_ms: 0, end_ms: 10, text: "Hello there" }] },
    },
    {
      kind: "pixels",
      good: { platform: "meta", pixel_id: "123456789012345", access_token: "tok-1" },
      bad: { platform: "meta", pixel_id: 123456789012345, access_token: "tok-1" },
      error: "pixel_id: must be a string (platform ids exceed 2^53 as numbers)",
      change: { access_token: "tok-2" },
    },
  ];
  for (const c of cases) {
    const path = file(`${c.kind}.jsonl`, `${JSON.stringify(c.bad)}\n${JSON.stringify(c.good)}\n`);
    assert.deepEqual(
      await runImport(db, testSecrets, { kind: c.kind, account: accountId, file: path }),
      {
        imported: 1,
        updated: 0,
        skipped: 0,
        errors: [{ line: 1, error: c.error }],
      },
      c.kind,
    );
    const changed = file(`${c.kind}-2.jsonl`, JSON.stringify({ ...c.good, ...c.change }));
    assert.deepEqual(
      await runImport(db, testSecrets, { kind: c.kind, account: accountId, file: changed }),
      {
        imported: 0,
        updated: 1,
        skipped: 0,
        errors: [],
      },
      c.kind,
    );
  }
});

test("events across batch boundaries: one contact, sale counting over earlier batches, replays skip", async () => {
  const { accountId } = await seedAccount(db);
  const at = (day: string) => `2026-04-${day}T09:00:00Z`;
  const path = file(
    "batches.jsonl",
    [
      { id: "b1", event_type: "lead", event_datetime: at("01"), contact_email: "x@example.com" },
      {
        id: "b2",
        event_type: "sale",
        event_datetime: at("02"),
        contact_email: " X@Example.com",
        amount: 500,
        product_key: "p",
      },
      "{not json",
      {
        id: "b3",
        event_type: "payment",
        event_datetime: at("05"),
        contact_email: "x@example.com",
        amount: 250,
        product_key: "p",
        payment_status: "paid",
      },
      { id: "b1", event_type: "lead", event_datetime: at("01"), contact_email: "x@example.com" },
      {
        id: "b4",
        event_type: "sale",
        event_datetime: "2026-06-01T09:00:00Z",
        contact_email: "x@example.com",
        amount: 900,
        product_key: "p",
      },
      {
        id: "b4",
        event_type: "sale",
        event_datetime: "2026-06-01T09:00:00Z",
        contact_email: "x@example.com",
        amount: 900,
        product_key: "p",
      },
    ]
      .map((line) => (typeof line === "string" ? line : JSON.stringify(line)))
      .join("\n"),
  );
  const progress: number[] = [];
  const input = { kind: "events", account: accountId, file: path };
  const first = await runImport(db, testSecrets, input, (p) => progress.push(p.lines), { batchSize: 2 });
  // Batches: {b1, b2} | {b3, b1 unchanged} | {b4, its duplicate skipped}.
  assert.deepEqual(progress, [2, 5, 7]);
  assert.deepEqual(first, {
    imported: 4,
    updated: 0,
    skipped: 2,
    errors: [{ line: 3, error: "not valid JSON" }],
  });
  const stored = await db.admin(accountId, (tx) =>
    rows<{
      id: string;
      counted: boolean | null;
      drop_reason: string | null;
      group_key: string | null;
      contact_seq: number | null;
    }>(
      tx,
      sql`select id, counted, drop_reason, group_key, contact_seq from events
          where account_id = ${accountId} order by event_datetime`,
    ),
  );
  assert.deepEqual(stored, [
    { id: "b1", counted: null, drop_reason: null, group_key: null, contact_seq: null },
    { id: "b2", counted: true, drop_reason: null, group_key: "b2", contact_seq: 1 },
    { id: "b3", counted: false, drop_reason: "duplicate", group_key: "b2", contact_seq: 2 },
    { id: "b4", counted: true, drop_reason: null, group_key: "b4", contact_seq: 3 },
  ]);
  assert.equal(await count(accountId, "contacts"), 1);
  const replay = await runImport(db, testSecrets, input, () => {}, { batchSize: 2 });
  assert.deepEqual(
    { ...replay, errors: replay.errors.length },
    { imported: 0, updated: 0, skipped: 6, errors: 1 },
  );
  // The default batch size gives the same rows.
  const whole = await runImport(db, testSecrets, input);
  assert.deepEqual(
    { ...whole, errors: whole.errors.length },
    { imported: 0, updated: 0, skipped: 6, errors: 1 },
  );
});
