import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { rows } from "../../src/db/client.ts";
import type { ApiError } from "../../src/http/errors.ts";
import type { Tenant } from "../../src/routes/route-def.ts";
import { setRuleDryRun } from "../../src/rules/ad-rule-service.ts";
import { seedAccount, seedAdRule, useTestApp } from "../helpers/harness.ts";

const env = useTestApp();

const send = env.send;

async function flagsOf(key: string, ruleId: string) {
  const rules = (await send("GET", "/ads/rules", key)).json().data as {
    id: string;
    enabled: boolean;
    dry_run: boolean;
  }[];
  const rule = rules.find((r) => r.id === ruleId);
  return rule ? { enabled: rule.enabled, dry_run: rule.dry_run } : null;
}

describe("ad rule writes", () => {
  test("enable: true unless false is sent explicitly; PUT and POST alike", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:ads", "write:ads"]);
    const rule = await seedAdRule(env.db, account.accountId);
    const steps: [string, Record<string, unknown>, boolean][] = [
      ["POST", { enabled: false }, false],
      ["POST", {}, true],
      ["PUT", { enabled: false }, false],
      ["PUT", { enabled: null }, true],
      ["POST", { enabled: false }, false],
      ["POST", { enabled: true }, true],
    ];
    for (const [method, body, enabled] of steps) {
      const res = await send(method as "PUT" | "POST", "/ads/rules/enable", key, { rule_id: rule, ...body });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: { rule_id: rule, enabled, dry_run: true } }, JSON.stringify(body));
      assert.deepEqual(await flagsOf(key, rule), { enabled, dry_run: true });
    }
  });

  test("dry-run: true unless false is sent; false arms the rule on a paid plan", async () => {
    const account = await seedAccount(env.db); // business plan
    const key = await account.key(["read:ads", "write:ads"]);
    const rule = await seedAdRule(env.db, account.accountId);
    const armed = await send("POST", "/ads/rules/dry-run", key, { rule_id: rule, dry_run: false });
    assert.deepEqual(armed.json(), { data: { rule_id: rule, enabled: true, dry_run: false } });
    assert.deepEqual(await flagsOf(key, rule), { enabled: true, dry_run: false });
    const back = await send("PUT", "/ads/rules/dry-run", key, { rule_id: rule });
    assert.deepEqual(back.json(), { data: { rule_id: rule, enabled: true, dry_run: true } });
  });

  test("the free plan cannot arm a rule, whoever calls the rule service; dry run stays allowed", async () => {
    const account = await seedAccount(env.db);
    const rule = await seedAdRule(env.db, account.accountId);
    const free: Tenant = { accountId: account.accountId, plan: "free", timezone: "UTC", currency: "EUR" };
    await assert.rejects(
      env.db.tenant(account.accountId, (tx) => setRuleDryRun(tx, free, rule, false)),
      (err: ApiError) => err.code === "plan_free_no_autopilot" && err.status === 403,
    );
    const kept = await env.db.tenant(account.accountId, (tx) => setRuleDryRun(tx, free, rule, true));
    assert.deepEqual(kept, { rule_id: rule, enabled: true, dry_run: true });
    const paid: Tenant = { ...free, plan: "pro" };
    const armed = await env.db.tenant(account.accountId, (tx) => setRuleDryRun(tx, paid, rule, false));
    assert.equal(armed.dry_run, false);
  });

  test("delete is final: the rule and its runs go; a second delete → 404", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:ads", "write:ads"]);
    const rule = await seedAdRule(env.db, account.accountId);
    const other = await seedAdRule(env.db, account.accountId);
    await env.db.admin(account.accountId, (tx) =>
      tx.execute(sql`insert into ad_rule_runs (account_id, id, rule_id, ran_at, dry_run, status)
                     values (${account.accountId}, gen_random_uuid(), ${rule}, now(), true, 'ok')`),
    );
    const res = await send("POST", "/ads/rules/delete", key, { rule_id: rule });
    assert.deepEqual(res.json(), { data: { rule_id: rule, deleted: true } });
    assert.equal(await flagsOf(key, rule), null);
    assert.deepEqual(await flagsOf(key, other), { enabled: true, dry_run: true }, "only that rule");
    const runs = await env.db.admin(account.accountId, (tx) =>
      rows<{ n: number }>(tx, sql`select count(*)::int as n from ad_rule_runs where rule_id = ${rule}`),
    );
    assert.equal(runs[0]?.n, 0);
    const again = await send("POST", "/ads/rules/delete", key, { rule_id: rule });
    assert.equal(again.statusCode, 404);
    assert.deepEqual(again.json(), { error: "not_found" });
  });

  test("another account's rule → 403 forbidden and untouched; no such rule → 404 not_found", async () => {
    const a = await seedAccount(env.db);
    const b = await seedAccount(env.db);
    const keyA = await a.key(["read:ads", "write:ads"]);
    const keyB = await b.key(["read:ads"]);
    const ruleB = await seedAdRule(env.db, b.accountId);
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const [path, body] of [
      ["/ads/rules/enable", { enabled: false }],
      ["/ads/rules/dry-run", { dry_run: false }],
      ["/ads/rules/delete", {}],
    ] as const) {
      const foreign = await send("POST", path, keyA, { rule_id: ruleB, ...body });
      assert.equal(foreign.statusCode, 403, path);
      assert.deepEqual(foreign.json(), { error: "forbidden" });
      const missing = await send("POST", path, keyA, { rule_id: unknown, ...body });
      assert.equal(missing.statusCode, 404, path);
      assert.deepEqual(missing.json(), { error: "not_found" });
    }
    assert.deepEqual(await flagsOf(keyB, ruleB), { enabled: true, dry_run: true });
  });

  test("400 missing rule_id; a malformed id or flag → 400 naming it; other methods → 405", async () => {
    const account = await seedAccount(env.db);
    const key = await account.key(["read:ads", "write:ads"]);
    const rule = await seedAdRule(env.db, account.accountId);
    for (const path of ["/ads/rules/enable", "/ads/rules/dry-run", "/ads/rules/delete"]) {
      for (const body of [{}, { rule_id: null }, { rule_id: 42 }, { id: rule }]) {
        const res = await send("POST", path, key, body);
        assert.equal(res.statusCode, 400, `${path} ${JSON.stringify(body)}`);
        assert.deepEqual(res.json(), { error: "missing rule_id" });
      }
      const bad = await send("POST", path, key, { rule_id: "rule-1" });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json(), { error: "rule_id: must be a UUID" });
    }
    for (const [path, body, field] of [
      ["/ads/rules/enable", { enabled: "false" }, /^enabled: /],
      ["/ads/rules/dry-run", { dry_run: 0 }, /^dry_run: /],
    ] as const) {
      const res = await send("POST", path, key, { rule_id: rule, ...body });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().error, field);
    }
    assert.deepEqual(await flagsOf(key, rule), { enabled: true, dry_run: true }, "nothing changed");
    assert.equal((await send("GET", "/ads/rules/enable", key)).statusCode, 405);
    assert.equal((await send("PUT", "/ads/rules/delete", key, { rule_id: rule })).statusCode, 405);
    assert.deepEqual(await flagsOf(key, rule), { enabled: true, dry_run: true });
  });
});
