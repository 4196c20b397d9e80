import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { demoWav } from "../../src/demo/write.ts";
import { seedAccount, seedRecordedCall, TEST_SITE_URL, useTestApp } from "../helpers/harness.ts";
import { loadFixture } from "../helpers/report-fixtures.ts";

let now = new Date("2026-06-30T12:00:00Z");
const env = useTestApp({ clock: () => now });

const CALL_FIELDS = [
  "artifact_id",
  "call_analysis_id",
  "call_type",
  "duration_sec",
  "icp_fit_score",
  "is_qualified",
  "markers",
  "next_step_proposed",
  "next_step_summary",
  "next_step_type",
  "qualification_reasoning",
  "rep_id",
  "scorecard_total",
  "starts_at",
  "summary",
  "title",
];

const SEGMENT_FIELDS = [
  "confidence",
  "end_ms",
  "idx",
  "speaker_email",
  "speaker_id",
  "speaker_label",
  "start_ms",
  "text",
];

/** A call record as `ascribe import calls` reads it. */
function call(id: string, startsAt: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    starts_at: startsAt,
    title: `Call ${id}`,
    duration_sec: 1800,
    call_analysis_id: `ana-${id}`,
    summary: `Summary of ${id}`,
    call_type: "discovery",
    is_qualified: true,
    icp_fit_score: 72.5,
    qualification_reasoning: "Budget and need",
    next_step_type: "follow_up_call",
    next_step_summary: "Call back",
    next_step_proposed: "Thursday",
    scorecard_total: 81.25,
    rep_id: "rep-1",
    markers: [{ ts: 12, label: "Budget", status: "hit" }],
    participant_emails: ["ann@x.test", "rep@seller.test"],
    ...extra,
  };
}

async function artifactIds(accountId: string): Promise<Record<string, number>> {
  const found = await env.db.admin(accountId, (tx) =>
    rows<{ external_id: string; artifact_id: number }>(
      tx,
      sql`select external_id, artifact_id::float8 as artifact_id from calls where account_id = ${accountId}`,
    ),
  );
  return Object.fromEntries(found.map((r) => [r.external_id, r.artifact_id]));
}

describe("GET /calls", () => {
  test("analyzed calls only, newest first, in the spec's shape", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      calls: [
        call("c1", "2026-06-01T09:00:00Z"),
        call("c2", "2026-06-03T09:00:00Z"),
        call("raw", "2026-06-04T09:00:00Z", { call_analysis_id: null }),
        call("c3", "2026-06-02T09:00:00Z"),
      ],
    });
    const key = await account.key(["read:calls"]);
    const res = await env.get(key, "/calls");
    assert.equal(res.status, 200);
    const data = res.body.data as Record<string, unknown>[];
    assert.deepEqual(
      data.map((c) => c.title),
      ["Call c2", "Call c3", "Call c1"],
    );
    const first = data[0] ?? {};
    assert.deepEqual(Object.keys(first).sort(), CALL_FIELDS);
    assert.equal(typeof first.artifact_id, "number");
    assert.equal(first.starts_at, "2026-06-03T09:00:00.000Z");
    assert.equal(first.icp_fit_score, 72.5);
    assert.equal(first.scorecard_total, 81.25);
    assert.deepEqual(first.markers, [{ ts: 12, label: "Budget", status: "hit" }]);
  });

  test("from/to on the start date; limit and offset partition the list", async () => {
    const account = await seedAccount(env.db);
    const days = ["01", "02", "03", "04", "05", "06", "07"];
    await loadFixture(env.db, account.accountId, {
      calls: days.map((d) => call(`d${d}`, `2026-06-${d}T10:00:00Z`)),
    });
    const key = await account.key(["read:calls"]);
    const window = await env.get(key, "/calls?from=2026-06-02&to=2026-06-04");
    assert.deepEqual(
      window.body.data.map((c: { title: string }) => c.title),
      ["Call d04", "Call d03", "Call d02"],
    );
    const seen: string[] = [];
    for (let offset = 0; offset < 8; offset += 3) {
      const page = await env.get(key, `/calls?limit=3&offset=${offset}`);
      seen.push(...page.body.data.map((c: { title: string }) => c.title));
    }
    assert.deepEqual(seen, [
      "Call d07",
      "Call d06",
      "Call d05",
      "Call d04",
      "Call d03",
      "Call d02",
      "Call d01",
    ]);
    assert.equal((await env.get(key, "/calls?limit=999")).body.data.length, 7, "limit clamped to 200");
    assert.equal((await env.get(key, "/calls?limit=0")).status, 400);
    assert.equal((await env.get(key, "/calls?offset=-1")).status, 400);
  });
});

describe("GET /contacts/calls", () => {
  test("the calls of the last 365 days an email took part in, with contact_email", async () => {
    const account = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      calls: [
        // now = 2026-06-30T12:00Z: 364 days back is in, 366 days back is out.
        call("recent", "2026-06-20T10:00:00Z"),
        call("in-lookback", "2025-07-01T12:00:00Z"),
        call("too-old", "2025-06-29T12:00:00Z"),
        call("someone-else", "2026-06-21T10:00:00Z", { participant_emails: ["bob@x.test"] }),
        call("mixed-case", "2026-06-22T10:00:00Z", { participant_emails: ["  ANN@X.test "] }),
      ],
    });
    const key = await account.key(["read:calls"]);
    const res = await env.get(key, "/contacts/calls?email=Ann@X.test");
    assert.equal(res.status, 200);
    const data = res.body.data as Record<string, unknown>[];
    assert.deepEqual(
      data.map((c) => c.title),
      ["Call mixed-case", "Call recent", "Call in-lookback"],
    );
    assert.deepEqual(Object.keys(data[0] ?? {}).sort(), [...CALL_FIELDS, "contact_email"].sort());
    assert.ok(data.every((c) => c.contact_email === "ann@x.test"));
    assert.deepEqual((await env.get(key, "/contacts/calls")).body, { data: [] });
    assert.equal((await env.get(key, "/contacts/calls?email=not-an-email")).status, 400);
  });

  test("follows a call's participants and start through a re-import and a delete; never another account's", async () => {
    const account = await seedAccount(env.db);
    const other = await seedAccount(env.db);
    await loadFixture(env.db, account.accountId, {
      calls: [call("moved", "2026-06-01T10:00:00Z"), call("handed-over", "2026-06-02T10:00:00Z")],
    });
    await loadFixture(env.db, other.accountId, { calls: [call("theirs", "2026-06-03T10:00:00Z")] });
    await loadFixture(env.db, account.accountId, {
      calls: [
        call("moved", "2026-06-05T10:00:00Z"),
        call("handed-over", "2026-06-02T10:00:00Z", { participant_emails: ["bob@x.test"] }),
      ],
    });
    const key = await account.key(["read:calls"]);
    const of = async (email: string) =>
      ((await env.get(key, `/contacts/calls?email=${email}`)).body.data as Record<string, unknown>[]).map(
        (c) => [c.title, c.starts_at],
      );
    assert.deepEqual(await of("ann@x.test"), [["Call moved", "2026-06-05T10:00:00.000Z"]]);
    assert.deepEqual(await of("bob@x.test"), [["Call handed-over", "2026-06-02T10:00:00.000Z"]]);

    await env.db.admin(account.accountId, (tx) =>
      tx.execute(sql`delete from calls where account_id = ${account.accountId} and external_id = 'moved'`),
    );
    assert.deepEqual(await of("ann@x.test"), []);
    const left = await env.db.admin(account.accountId, (tx) =>
      rows<{ email: string }>(
        tx,
        sql`select email from call_participants where account_id = ${account.accountId} order by email`,
      ),
    );
    assert.deepEqual(
      left.map((r) => r.email),
      ["bob@x.test"],
    );
  });
});

describe("GET /calls/transcript", () => {
  test("segments in order; without id an empty array; another account's call → 403", async () => {
    const account = await seedAccount(env.db);
    const other = await seedAccount(env.db);
    const segments = [
      { start_ms: 0, end_ms: 900, speaker_id: "spk_0", speaker_label: "Rep", text: "Hello", confidence: 0.9 },
      {
        start_ms: 1000,
        end_ms: 1900,
        speaker_id: "spk_1",
        speaker_label: "Ann",
        text: "Hi",
        confidence: 0.8,
      },
      {
        start_ms: 2000,
        end_ms: 2900,
        speaker_id: "spk_0",
        speaker_label: "Rep",
        text: "Tell me",
        confidence: null,
      },
    ];
    await loadFixture(env.db, account.accountId, {
      calls: [call("t1", "2026-06-10T10:00:00Z", { transcript: segments })],
    });
    await loadFixture(env.db, other.accountId, {
      calls: [call("t2", "2026-06-10T10:00:00Z", { transcript: segments })],
    });
    const id = (await artifactIds(account.accountId)).t1;
    const foreign = (await artifactIds(other.accountId)).t2;
    // Stored out of order: the answer must not depend on the order rows were written.
    await env.db.admin(account.accountId, async (tx) => {
      const stored = await rows<Record<string, unknown>>(
        tx,
        sql`delete from call_transcript_segments where account_id = ${account.accountId} returning *`,
      );
      for (const s of stored.reverse()) {
        await tx.execute(sql`insert into call_transcript_segments
          (account_id, artifact_id, idx, start_ms, end_ms, speaker_id, speaker_label, speaker_email, text, confidence)
          values (${s.account_id}, ${s.artifact_id}, ${s.idx}, ${s.start_ms}, ${s.end_ms}, ${s.speaker_id},
                  ${s.speaker_label}, ${s.speaker_email}, ${s.text}, ${s.confidence})`);
      }
    });
    const key = await account.key(["read:calls"]);
    const res = await env.get(key, `/calls/transcript?id=${id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, [
      {
        idx: 0,
        start_ms: 0,
        end_ms: 900,
        speaker_id: "spk_0",
        speaker_label: "Rep",
        speaker_email: null,
        text: "Hello",
        confidence: 0.9,
      },
      {
        idx: 1,
        start_ms: 1000,
        end_ms: 1900,
        speaker_id: "spk_1",
        speaker_label: "Ann",
        speaker_email: null,
        text: "Hi",
        confidence: 0.8,
      },
      {
        idx: 2,
        start_ms: 2000,
        end_ms: 2900,
        speaker_id: "spk_0",
        speaker_label: "Rep",
        speaker_email: null,
        text: "Tell me",
        confidence: null,
      },
    ]);
    assert.deepEqual(Object.keys(res.body.data[0]).sort(), SEGMENT_FIELDS);
    assert.deepEqual((await env.get(key, "/calls/transcript")).body, { data: [] });
    for (const missing of [foreign, 987_654_321]) {
      const refused = await env.get(key, `/calls/transcript?id=${missing}`);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.body, { error: "forbidden" });
    }
    assert.equal((await env.get(key, "/calls/transcript?id=abc")).status, 400);
  });
});

describe("GET /calls/recording", () => {
  test("id missing or not positive → 400 invalid_id", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:calls"]);
    for (const query of ["", "?id=", "?id=0", "?id=-4", "?id=abc", "?id=1.5"]) {
      const res = await env.get(key, `/calls/recording${query}`);
      assert.equal(res.status, 400, query);
      assert.deepEqual(res.body, { error: "invalid_id" }, query);
    }
  });

  test("another account's call, or an unknown one → 403 forbidden; no file → 404", async () => {
    const account = await seedAccount(env.db);
    const other = await seedAccount(env.db);
    const foreign = await seedRecordedCall(env.db, env.app.files, other.accountId);
    await loadFixture(env.db, account.accountId, { calls: [call("silent", "2026-06-10T10:00:00Z")] });
    const silent = (await artifactIds(account.accountId)).silent;
    const key = await account.key(["read:calls"]);
    for (const id of [foreign, 987_654_321]) {
      const res = await env.get(key, `/calls/recording?id=${id}`);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { error: "forbidden" });
    }
    const none = await env.get(key, `/calls/recording?id=${silent}`);
    assert.equal(none.status, 404);
    assert.deepEqual(none.body, { error: "no_recording_available" });
    // A path recorded but no file stored: no dead link is handed out.
    await env.db.admin(account.accountId, (tx) =>
      tx.execute(
        sql`update calls set audio_path = 'calls/missing.wav' where account_id = ${account.accountId}`,
      ),
    );
    assert.deepEqual((await env.get(key, `/calls/recording?id=${silent}`)).body, {
      error: "no_recording_available",
    });
  });

  test("the locator: signed URLs valid one hour, fetchable with a range, refused after expiry or tampering", async () => {
    const account = await seedAccount(env.db);
    const other = await seedAccount(env.db);
    const id = await seedRecordedCall(env.db, env.app.files, account.accountId, { externalId: "rec-1" });
    const foreignId = await seedRecordedCall(env.db, env.app.files, other.accountId, { externalId: "rec-2" });
    const key = await account.key(["read:calls"]);
    const res = await env.get(key, `/calls/recording?id=${id}`);
    assert.equal(res.status, 200);
    const locator = res.body.data;
    assert.deepEqual(Object.keys(locator).sort(), [
      "artifact_id",
      "audio_url",
      "content_type",
      "expires_in",
      "has_video",
      "video_url",
    ]);
    assert.equal(locator.artifact_id, id);
    assert.equal(locator.content_type, "audio/wav");
    assert.equal(locator.expires_in, 3600);
    assert.equal(locator.video_url, null);
    assert.equal(locator.has_video, false);
    const url = new URL(locator.audio_url);
    assert.equal(url.origin, TEST_SITE_URL);
    assert.equal(url.pathname, `/files/${account.accountId}/calls/rec-1.wav`);
    assert.equal(url.searchParams.get("expires"), String(Date.parse("2026-06-30T13:00:00Z") / 1000));

    // Fetched without any key, seekable.
    const wav = demoWav(1);
    const ranged = await env.app.inject({
      url: url.pathname + url.search,
      headers: { range: "bytes=44-99" },
    });
    assert.equal(ranged.statusCode, 206);
    assert.equal(ranged.headers["content-type"], "audio/wav");
    assert.equal(ranged.headers["content-range"], `bytes 44-99/${wav.length}`);
    assert.deepEqual(ranged.rawPayload, wav.subarray(44, 100));

    // Another account's file through this URL's signature.
    const foreignUrl = new URL(
      (await env.get(await other.key(["read:calls"]), `/calls/recording?id=${foreignId}`)).body.data
        .audio_url,
    );
    const swapped = `${foreignUrl.pathname}${url.search}`;
    assert.equal((await env.app.inject({ url: swapped })).statusCode, 403);
    const tampered = url.search.replace(/signature=[^&]+/, "signature=test.AAAA");
    assert.equal((await env.app.inject({ url: url.pathname + tampered })).statusCode, 403);

    const issued = now;
    try {
      now = new Date(issued.getTime() + 3601_000);
      const expired = await env.app.inject({ url: url.pathname + url.search });
      assert.equal(expired.statusCode, 403);
      assert.deepEqual(expired.json(), { error: "link_expired" });
    } finally {
      now = issued;
    }
  });

  test("a stored video gets its own signed URL", async () => {
    const account = await seedAccount(env.db);
    const id = await seedRecordedCall(env.db, env.app.files, account.accountId, { externalId: "vid-1" });
    const video = Buffer.from("not really an mp4, but bytes all the same");
    await env.app.files.put(account.accountId, "calls/vid-1.mp4", video);
    await env.db.admin(account.accountId, (tx) =>
      tx.execute(
        sql`update calls set video_path = 'calls/vid-1.mp4' where account_id = ${account.accountId}`,
      ),
    );
    const locator = (await env.get(await account.key(["read:calls"]), `/calls/recording?id=${id}`)).body.data;
    assert.equal(locator.has_video, true);
    const url = new URL(locator.video_url);
    const res = await env.app.inject({ url: url.pathname + url.search });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "video/mp4");
    assert.deepEqual(res.rawPayload, video);
  });
});
