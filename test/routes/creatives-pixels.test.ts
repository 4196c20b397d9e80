import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { bearer, seedAccount, useTestApp } from "../helpers/harness.ts";
import { type Fixture, loadFixture } from "../helpers/report-fixtures.ts";

const now = new Date("2026-03-31T12:00:00Z");

const env = useTestApp({ clock: () => now });

type Row = Record<string, unknown>;

const ids = (data: Row[]) => data.map((r) => r.id);

async function accountWith(fixture: Fixture, scopes: ("read:creatives" | "write:creatives" | "read:capi")[]) {
  const account = await seedAccount(env.db);
  await loadFixture(env.db, account.accountId, fixture);
  return { account, key: await account.key(scopes) };
}

/** A need's UUID by number: `need(7)` is 00000000-0000-4000-8000-000000000007. */
const need = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** Needs of every status; in progress (open, partial) oldest first: n6, n2, n1, n5. */
const needs: Fixture = {
  "creative-requests": [
    {
      id: need(1),
      reason: "Not enough video hooks",
      status: "open",
      requested_count: 3,
      context: { angle: "pain", platform: "meta", ad_ids: ["120000000000000001"] },
      created_at: "2026-03-05T10:00:00Z",
    },
    {
      id: need(2),
      reason: "Fatigue on the winning ad",
      status: "partial",
      requested_count: 5,
      filled_count: 2,
      created_at: "2026-03-01T10:00:00Z",
      notified_at: "2026-03-02T08:00:00Z",
    },
    {
      id: need(3),
      reason: "Spring launch",
      status: "filled",
      requested_count: 2,
      filled_count: 2,
      created_at: "2026-02-20T10:00:00Z",
      notified_at: "2026-02-21T10:00:00Z",
    },
    {
      id: need(4),
      reason: "Dropped campaign",
      status: "cancelled",
      requested_count: 1,
      created_at: "2026-02-25T10:00:00Z",
    },
    {
      id: need(5),
      reason: "New audience",
      status: "open",
      requested_count: 2,
      created_at: "2026-03-10T10:00:00+01:00",
      notified_at: "2026-03-11T09:15:00Z",
    },
    {
      id: need(6),
      reason: "Low CTR on statics",
      status: "partial",
      requested_count: 4,
      filled_count: 1,
      created_at: "2026-02-10T10:00:00Z",
    },
    {
      id: need(7),
      reason: "Retargeting set",
      status: "filled",
      requested_count: 1,
      filled_count: 1,
      created_at: "2026-03-12T10:00:00Z",
    },
  ],
};

const NEED_FIELDS = [
  "id",
  "reason",
  "status",
  "requested_count",
  "filled_count",
  "context",
  "created_at",
  "notified_at",
].sort();

describe("GET /creatives/requests", () => {
  test("without status: the needs in progress (open, partial), oldest to newest, every field", async () => {
    const { key } = await accountWith(needs, ["read:creatives"]);
    const r = await env.get(key, "/creatives/requests");
    assert.equal(r.status, 200);
    const data = r.body.data as Row[];
    assert.deepEqual(ids(data), [need(6), need(2), need(1), need(5)]);
    for (const row of data) assert.deepEqual(Object.keys(row).sort(), NEED_FIELDS);
    assert.deepEqual(data[2], {
      id: need(1),
      reason: "Not enough video hooks",
      status: "open",
      requested_count: 3,
      filled_count: 0,
      context: { angle: "pain", platform: "meta", ad_ids: ["120000000000000001"] },
      created_at: "2026-03-05T10:00:00.000Z",
      notified_at: null,
    });
    assert.deepEqual(data[1], {
      id: need(2),
      reason: "Fatigue on the winning ad",
      status: "partial",
      requested_count: 5,
      filled_count: 2,
      context: null,
      created_at: "2026-03-01T10:00:00.000Z",
      notified_at: "2026-03-02T08:00:00.000Z",
    });
    // An offset instant comes back in UTC.
    assert.equal(data[3]?.created_at, "2026-03-10T09:00:00.000Z");
  });

  test("status: only that status; an unknown one → 400 naming status", async () => {
    const { key } = await accountWith(needs, ["read:creatives"]);
    const of = async (q: string) => {
      const r = await env.get(key, `/creatives/requests?${q}`);
      assert.equal(r.status, 200, q);
      return r.body.data as Row[];
    };
    const filled = await of("status=filled");
    assert.deepEqual(ids(filled), [need(3), need(7)]);
    assert.ok(filled.every((n) => n.status === "filled"));
    assert.deepEqual(ids(await of("status=open")), [need(1), need(5)]);
    assert.deepEqual(ids(await of("status=partial")), [need(6), need(2)]);
    assert.deepEqual(ids(await of("status=cancelled")), [need(4)]);
    const refused = {
      status: 400,
      body: { error: "status: must be one of open, partial, filled, cancelled" },
    };
    assert.deepEqual(await env.get(key, "/creatives/requests?status=bogus"), refused);
    assert.deepEqual(await env.get(key, "/creatives/requests?status=OPEN"), refused);
    assert.deepEqual(await env.get(key, "/creatives/requests?status="), refused);
  });

  test("unnotified = 1 or true: only needs never relayed; another value → 400", async () => {
    const { key } = await accountWith(needs, ["read:creatives"]);
    const of = async (q: string) => {
      const r = await env.get(key, `/creatives/requests?${q}`);
      assert.equal(r.status, 200, q);
      return ids(r.body.data);
    };
    assert.deepEqual(await of("unnotified=1"), [need(6), need(1)]);
    assert.deepEqual(await of("unnotified=true"), [need(6), need(1)]);
    assert.deepEqual(await of("unnotified=0"), [need(6), need(2), need(1), need(5)]);
    assert.deepEqual(await of("unnotified=false"), [need(6), need(2), need(1), need(5)]);
    assert.deepEqual(await of("status=filled&unnotified=1"), [need(7)]);
    assert.deepEqual(await of("status=cancelled&unnotified=true"), [need(4)]);
    for (const value of ["maybe", "yes", "2"]) {
      assert.deepEqual(
        await env.get(key, `/creatives/requests?unnotified=${value}`),
        { status: 400, body: { error: "unnotified: must be true, 1, false or 0" } },
        value,
      );
    }
  });

  test("limit: default 50, clamped to 200; below 1 → 400; another account's needs never appear", async () => {
    // 205 open needs a minute apart: need(1000) is the oldest.
    const many = Array.from({ length: 205 }, (_, i) => ({
      id: need(1000 + i),
      reason: `need ${i}`,
      status: "open",
      requested_count: 1,
      created_at: new Date(Date.parse("2026-01-01T00:00:00Z") + i * 60_000).toISOString(),
    }));
    const { key } = await accountWith({ "creative-requests": many }, ["read:creatives"]);
    await accountWith(needs, ["read:creatives"]);
    const byDefault = (await env.get(key, "/creatives/requests")).body.data as Row[];
    assert.equal(byDefault.length, 50);
    assert.deepEqual([byDefault[0]?.id, byDefault[49]?.id], [need(1000), need(1049)]);
    const clamped = (await env.get(key, "/creatives/requests?limit=1000")).body.data as Row[];
    assert.equal(clamped.length, 200);
    assert.deepEqual([clamped[0]?.id, clamped[199]?.id], [need(1000), need(1199)]);
    assert.equal(((await env.get(key, "/creatives/requests?limit=200")).body.data as Row[]).length, 200);
    assert.deepEqual(ids((await env.get(key, "/creatives/requests?limit=2")).body.data), [
      need(1000),
      need(1001),
    ]);
    // The other account's needs are older and in progress: none of them shows.
    assert.ok(
      (await env.get(key, "/creatives/requests?limit=200")).body.data.every(
        (n: Row) => typeof n.reason === "string" && n.reason.startsWith("need "),
      ),
    );
    assert.deepEqual(await env.get(key, "/creatives/requests?limit=0"), {
      status: 400,
      body: { error: "limit: must be at least 1" },
    });
    assert.deepEqual(await env.get(key, "/creatives/requests?limit=ten"), {
      status: 400,
      body: { error: "limit: must be an integer" },
    });
  });
});

/** Every key of a JSON value, at any depth. */
function keysDeep(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const item of value) keysDeep(item, out);
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      keysDeep(v, out);
    }
  }
  return out;
}

const PIXEL_FIELDS = [
  "id",
  "platform",
  "pixel_id",
  "name",
  "is_default",
  "connected",
  "routing",
  "created_at",
  "updated_at",
].sort();

const META_TOKEN = "EAABplaintextMetaToken7f3a9c";
const GOOGLE_TOKEN = "ya29.plaintext-google-token-22";

const pixels: Fixture = {
  pixels: [
    {
      platform: "Meta",
      // Above 2^53: only a string keeps every digit.
      pixel_id: "1234567890123456789",
      name: "Main pixel",
      is_default: true,
      access_token: META_TOKEN,
      routing: {
        events: ["Purchase", "Lead"],
        // Secret-bearing fields inside the routing are stripped too.
        nested: {
          access_token: "nested-plaintext-token",
          app_secret: "nested-plaintext-secret",
          keep: "yes",
        },
      },
    },
    { platform: "tiktok", pixel_id: "C4ABCDEF123" },
    {
      platform: "google",
      pixel_id: "AW-987654321",
      name: "Ads",
      access_token: GOOGLE_TOKEN,
      routing: { conversion_label: "abc" },
    },
  ],
};

describe("POST /creatives/requests/ack", () => {
  const ack = (key: string, body: unknown) => env.send("POST", "/creatives/requests/ack", key, body);
  const notified = async (key: string, status: string) =>
    Object.fromEntries(
      (
        (await env.get(key, `/creatives/requests?status=${status}`)).body.data as {
          id: string;
          status: string;
          notified_at: string | null;
        }[]
      ).map((r) => [r.id, [r.status, r.notified_at]]),
    );

  test("marks the never-relayed needs among ids, whatever their status; counts them; a replay → 0", async () => {
    const { key } = await accountWith(needs, ["read:creatives", "write:creatives"]);
    // The same need id in another account, never relayed: untouched.
    const { key: otherKey } = await accountWith(
      { "creative-requests": [{ id: need(1), reason: "B's", status: "open", requested_count: 1 }] },
      ["read:creatives"],
    );
    // n1, n6, n7 were never relayed; n2 was; n99 does not exist.
    const res = await ack(key, { ids: [need(1), need(2), need(6), need(7), need(99)] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: 3 });
    const stamp = "2026-03-31T12:00:00.000Z";
    assert.deepEqual(await notified(key, "open"), {
      [need(1)]: ["open", stamp],
      [need(5)]: ["open", "2026-03-11T09:15:00.000Z"],
    });
    assert.deepEqual(await notified(key, "partial"), {
      [need(2)]: ["partial", "2026-03-02T08:00:00.000Z"],
      [need(6)]: ["partial", stamp],
    });
    assert.deepEqual(await notified(key, "filled"), {
      [need(3)]: ["filled", "2026-02-21T10:00:00.000Z"],
      [need(7)]: ["filled", stamp],
    });
    assert.deepEqual(await notified(key, "cancelled"), { [need(4)]: ["cancelled", null] }, "not in ids");
    assert.deepEqual(await notified(otherKey, "open"), { [need(1)]: ["open", null] });
    assert.deepEqual((await ack(key, { ids: [need(1), need(6), need(7)] })).json(), { data: 0 });
  });

  test("ids missing, empty, not an array or holding a non-UUID → 400 missing ids (array of request UUIDs)", async () => {
    const { key } = await accountWith(needs, ["read:creatives", "write:creatives"]);
    for (const body of [
      {},
      { ids: null },
      { ids: [] },
      { ids: need(1) },
      { ids: [need(1), "n2"] },
      { ids: [7] },
    ]) {
      const res = await ack(key, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.deepEqual(res.json(), { error: "missing ids (array of request UUIDs)" });
    }
    assert.deepEqual(await notified(key, "open"), {
      [need(1)]: ["open", null],
      [need(5)]: ["open", "2026-03-11T09:15:00.000Z"],
    });
  });
});

describe("GET /capi/pixels", () => {
  test("the pixels (by platform, pixel id) and the default one; connected when a token is stored", async () => {
    const { key } = await accountWith(pixels, ["read:capi"]);
    const r = await env.get(key, "/capi/pixels");
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body.data).sort(), ["default", "pixels"]);
    const list = r.body.data.pixels as Row[];
    for (const p of list) {
      assert.deepEqual(Object.keys(p).sort(), PIXEL_FIELDS);
      assert.match(String(p.id), /^[0-9a-f-]{36}$/);
      assert.equal(typeof p.pixel_id, "string");
    }
    const strip = (p: Row | undefined) => ({ ...p, id: null, created_at: null, updated_at: null });
    assert.deepEqual(list.map(strip), [
      {
        id: null,
        platform: "google",
        pixel_id: "AW-987654321",
        name: "Ads",
        is_default: false,
        connected: true,
        routing: { conversion_label: "abc" },
        created_at: null,
        updated_at: null,
      },
      {
        id: null,
        platform: "meta",
        pixel_id: "1234567890123456789",
        name: "Main pixel",
        is_default: true,
        connected: true,
        routing: { events: ["Purchase", "Lead"], nested: { keep: "yes" } },
        created_at: null,
        updated_at: null,
      },
      {
        id: null,
        platform: "tiktok",
        pixel_id: "C4ABCDEF123",
        name: null,
        is_default: false,
        connected: false,
        routing: {},
        created_at: null,
        updated_at: null,
      },
    ]);
    assert.deepEqual(r.body.data.default, list[1]);
  });

  test("no token leaves: neither the plaintext nor the sealed value, no key naming a token or secret", async () => {
    const { account, key } = await accountWith(pixels, ["read:capi"]);
    // The tokens are sealed at rest (the test keyring's id is `test`).
    const stored = await env.db.admin(account.accountId, (tx) =>
      rows<{ pixel_id: string; sealed: string | null }>(
        tx,
        sql`select pixel_id, access_token_sealed as sealed from pixels
            where account_id = ${account.accountId} order by pixel_id`,
      ),
    );
    const sealed = stored.flatMap((p) => (p.sealed === null ? [] : [p.sealed]));
    assert.equal(sealed.length, 2);
    for (const s of sealed) {
      assert.match(s, /^v1\.test\./);
      assert.ok(!s.includes(META_TOKEN) && !s.includes(GOOGLE_TOKEN));
    }

    const res = await env.app.inject({ method: "GET", url: "/api/v1/capi/pixels", headers: bearer(key) });
    assert.equal(res.statusCode, 200);
    const text = res.payload;
    for (const secret of [META_TOKEN, GOOGLE_TOKEN, "nested-plaintext-token", "nested-plaintext-secret"]) {
      assert.ok(!text.includes(secret), `plaintext ${secret} in the response`);
    }
    for (const s of sealed) {
      assert.ok(!text.includes(s), "a sealed token in the response");
      // Nor any piece of it: its IV or its ciphertext.
      for (const part of s.split(".").slice(2)) assert.ok(!text.includes(part), "part of a sealed token");
    }
    assert.doesNotMatch(text, /v1\.[a-z0-9]{1,16}\.[A-Za-z0-9_-]{16}\./);
    const keys = keysDeep(JSON.parse(text));
    assert.ok(keys.includes("routing") && keys.includes("keep"), "the walk reaches nested keys");
    const offending = keys.filter((k) => /token|secret/i.test(k));
    assert.deepEqual(offending, []);
  });

  test("default: null without one; one default per account; [] without pixels; other accounts never appear", async () => {
    const empty = await accountWith({}, ["read:capi"]);
    assert.deepEqual(await env.get(empty.key, "/capi/pixels"), {
      status: 200,
      body: { data: { pixels: [], default: null } },
    });
    // Another account's pixels (with a default) do not show up.
    await accountWith(pixels, ["read:capi"]);
    assert.deepEqual((await env.get(empty.key, "/capi/pixels")).body.data, { pixels: [], default: null });

    const account = await seedAccount(env.db);
    const key = await account.key(["read:capi"]);
    await loadFixture(env.db, account.accountId, { pixels: [{ platform: "meta", pixel_id: "111" }] });
    const noDefault = (await env.get(key, "/capi/pixels")).body.data;
    assert.deepEqual(
      noDefault.pixels.map((p: Row) => [p.pixel_id, p.is_default, p.connected]),
      [["111", false, false]],
    );
    assert.equal(noDefault.default, null);

    await loadFixture(env.db, account.accountId, {
      pixels: [{ platform: "meta", pixel_id: "222", is_default: true, access_token: "t-222" }],
    });
    assert.equal((await env.get(key, "/capi/pixels")).body.data.default.pixel_id, "222");
    // A new default takes the place of the old one.
    await loadFixture(env.db, account.accountId, {
      pixels: [{ platform: "meta", pixel_id: "111", is_default: true }],
    });
    const moved = (await env.get(key, "/capi/pixels")).body.data;
    assert.deepEqual(
      moved.pixels.map((p: Row) => [p.pixel_id, p.is_default, p.connected]),
      [
        ["111", true, false],
        ["222", false, true],
      ],
    );
    assert.deepEqual(moved.default, moved.pixels[0]);
  });
});
