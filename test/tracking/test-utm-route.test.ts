import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { awayFromWindowEdge, seedAccount, useTestApp } from "../helpers/harness.ts";

const env = useTestApp({ counters: createMemoryCounterStore() });

let ip = 0;
function call(method: "GET" | "POST", url: string, payload?: string, remoteAddress?: string) {
  ip += 1;
  return env.app.inject({
    method,
    url,
    ...(payload === undefined ? {} : { payload, headers: { "content-type": "application/json" } }),
    remoteAddress: remoteAddress ?? `10.40.${Math.floor(ip / 250)}.${ip % 250}`,
  });
}

const AD_QUERY =
  "utm_source=facebook&utm_medium=paid&utm_campaign=Spring%20launch&utm_content=Video%203&utm_term=Lookalike" +
  "&utm_campaign_id=120210000000001&utm_ad_id=120210000000003&utm_adset_id=120210000000002";

describe("GET|POST /api/webhook/test-utm", () => {
  test("GET grades the query's parameters: grade, summary, found, missing, warnings, fields", async () => {
    const account = await seedAccount(env.db);
    const res = await call("GET", `/api/webhook/test-utm?client_key=${account.clientKey}&${AD_QUERY}`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.grade, "A+");
    assert.equal(body.found.length, 8);
    assert.deepEqual(body.missing, []);
    assert.deepEqual(body.warnings, []);
    assert.deepEqual(body.fields.utm_campaign, { value: "Spring launch", status: "ok", required: true });
    assert.equal(typeof body.summary, "string");
  });

  test("GET with a whole ad url grades its query; a macro left in it is caught", async () => {
    const account = await seedAccount(env.db);
    const url = encodeURIComponent(
      "https://shop.example.co.uk/offer?utm_source=facebook&utm_medium=paid&utm_campaign=%7B%7Bcampaign.name%7D%7D&utm_content=Video&utm_term=LAL",
    );
    const body = (
      await call("GET", `/api/webhook/test-utm?client_key=${account.clientKey}&url=${url}`)
    ).json();
    assert.equal(body.grade, "B");
    assert.equal(body.fields.utm_campaign.status, "unresolved_macro");
    assert.match(body.warnings[0], /Set the URL parameters at ad level/);
  });

  test("POST grades the JSON body a form tool would send, echoes the email, and writes nothing", async () => {
    const account = await seedAccount(env.db);
    const res = await call(
      "POST",
      `/api/webhook/test-utm?client_key=${account.clientKey}`,
      JSON.stringify({
        email: " Lead@Example.com ",
        utm_source: "facebook",
        utmMedium: "paid",
        utm_campaign: "Spring",
      }),
    );
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.email, "lead@example.com");
    assert.equal(body.grade, "D");
    assert.deepEqual(body.found, ["utm_source", "utm_campaign"]);
    assert.match(body.warnings.join("\n"), /"utmMedium" is not recognized: rename it "utm_medium"/);
    const written = await env.db.admin(account.accountId, (tx) =>
      rows<{ n: number }>(
        tx,
        sql`select (select count(*) from contacts where account_id = ${account.accountId})::int
          + (select count(*) from touchpoints where account_id = ${account.accountId})::int
          + (select count(*) from events where account_id = ${account.accountId})::int as n`,
      ),
    );
    assert.equal(written[0]?.n, 0);
  });

  test("a missing or unknown client_key, a bad email, a bad url or a non-object body → 400 naming it", async () => {
    const account = await seedAccount(env.db);
    const cases: [ReturnType<typeof call>, RegExp][] = [
      [call("GET", `/api/webhook/test-utm?${AD_QUERY}`), /client_key: is required/],
      [
        call("GET", `/api/webhook/test-utm?client_key=ck_nobodyNOBODY1234&${AD_QUERY}`),
        /client_key: unknown client key/,
      ],
      [
        call("GET", `/api/webhook/test-utm?client_key=${account.clientKey}&url=not-a-url`),
        /url: is not an absolute URL/,
      ],
      [
        call(
          "POST",
          `/api/webhook/test-utm?client_key=${account.clientKey}`,
          JSON.stringify({ email: "nope" }),
        ),
        /email/,
      ],
      [
        call("POST", `/api/webhook/test-utm?client_key=${account.clientKey}`, "[1,2]"),
        /body must be a JSON object/,
      ],
      [call("POST", `/api/webhook/test-utm?client_key=${account.clientKey}`, "{"), /body is not valid JSON/],
      [
        call(
          "POST",
          `/api/webhook/test-utm?client_key=${account.clientKey}`,
          JSON.stringify({ utm_source: 5 }),
        ),
        /utm_source/,
      ],
    ];
    for (const [pending, message] of cases) {
      const res = await pending;
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().error, message);
    }
  });

  test("more than 60 requests a minute from one address → 429 rate_limited", async () => {
    const account = await seedAccount(env.db);
    // The minute windows are epoch-aligned: the 60 and the 61st must fall in the same one.
    await awayFromWindowEdge(60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++)
      statuses.push(
        (await call("GET", `/api/webhook/test-utm?client_key=${account.clientKey}`, undefined, "10.99.0.1"))
          .statusCode,
      );
    assert.deepEqual([...new Set(statuses.slice(0, 60))], [200]);
    const refused = await call(
      "GET",
      `/api/webhook/test-utm?client_key=${account.clientKey}`,
      undefined,
      "10.99.0.1",
    );
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, "rate_limited");
  });
});
