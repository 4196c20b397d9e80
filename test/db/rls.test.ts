import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { hashApiKey } from "../../src/auth/api-key.ts";
import { type Database, rows } from "../../src/db/client.ts";
import { findKeyByHash } from "../../src/queries/find-key-by-hash.ts";
import { replaceIcpCriteria } from "../../src/queries/replace-icp-criteria.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

let db: Database;

/** drizzle wraps the driver's error; the database's own message is the cause. */
function rlsViolation(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof Error && /row-level security/.test(cause.message);
}
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

describe("row-level security", () => {
  test("every table with account_id has RLS enabled and forced, with a tenant policy", async () => {
    const tables = await db.admin(null, (tx) =>
      rows<{ table: string; enabled: boolean; forced: boolean; policies: string[] }>(
        tx,
        sql`
          select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
                 coalesce(array_agg(p.policyname) filter (where p.policyname is not null), '{}') as policies
          from pg_class c
          join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
          join pg_attribute a on a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped
          left join pg_policies p on p.schemaname = 'public' and p.tablename = c.relname
          where c.relkind in ('r', 'p')
          group by c.relname, c.relrowsecurity, c.relforcerowsecurity
          order by c.relname`,
      ),
    );
    // The list itself is pinned so a new tenant table is noticed here.
    assert.deepEqual(
      tables.map((t) => t.table),
      [
        "account_settings",
        "ad_catalog_versions",
        "ad_rule_runs",
        "ad_rules",
        "ad_spend_daily",
        "ads",
        "api_keys",
        "attribution_day_credits",
        "attribution_null_paths",
        "audit_log",
        "beacon_receipts",
        "call_participants",
        "call_transcript_segments",
        "calls",
        "connector_deliveries",
        "connectors",
        "contact_activity",
        "contact_maintenance_backlog",
        "contact_milestones",
        "contacts",
        "creative_requests",
        "creative_uploads",
        "creatives",
        "customer_totals",
        "customers",
        "events",
        "icp_criteria",
        "journey_changes",
        "kpi_goals",
        "members",
        "pixels",
        "purchases",
        "report_rollup_daily",
        "report_rollup_delta",
        "reps",
        "touchpoint_rollup_daily",
        "touchpoint_rollup_delta",
        "touchpoints",
        "tracking_hosts",
        "web_session_daily",
        "web_session_delta",
      ],
    );
    for (const t of tables) {
      assert.equal(t.enabled, true, `${t.table}: RLS enabled`);
      assert.equal(t.forced, true, `${t.table}: RLS forced`);
      assert.ok(t.policies.includes("tenant_isolation"), `${t.table}: tenant_isolation policy`);
    }
  });

  test("account_id comes first in every tenant table's primary key and tenant foreign key (distribution column)", async () => {
    const keys = await db.admin(null, (tx) =>
      rows<{
        table: string;
        constraint: string;
        kind: string;
        first_column: string;
        references_tenant: boolean;
      }>(
        tx,
        sql`
          select c.relname as table, k.conname as constraint, k.contype::text as kind,
                 a.attname as first_column,
                 coalesce(exists (
                   select 1 from pg_attribute ra
                   where ra.attrelid = k.confrelid and ra.attname = 'account_id' and not ra.attisdropped
                 ), false) as references_tenant
          from pg_constraint k
          join pg_class c on c.oid = k.conrelid
          join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
          join pg_attribute a on a.attrelid = c.oid and a.attnum = k.conkey[1]
          where k.contype in ('p', 'f')
            and exists (select 1 from pg_attribute t where t.attrelid = c.oid and t.attname = 'account_id')`,
      ),
    );
    assert.ok(keys.length > 20);
    for (const k of keys) {
      // Primary keys, and foreign keys to tenant tables (not to global ones such as users).
      if (k.kind === "p" || k.references_tenant) {
        assert.equal(k.first_column, "account_id", `${k.table}.${k.constraint}`);
      }
    }
  });

  test("the request role sees only its tenant's rows, even without a WHERE clause", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    await db.admin(a.accountId, (tx) => replaceIcpCriteria(tx, a.accountId, { criteria: { who: "A" } }));
    await db.admin(b.accountId, (tx) => replaceIcpCriteria(tx, b.accountId, { criteria: { who: "B" } }));
    const seenByA = await db.tenant(a.accountId, (tx) =>
      rows<{ who: string }>(tx, sql`select criteria->>'who' as who from icp_criteria`),
    );
    assert.deepEqual(seenByA, [{ who: "A" }]);
    const accountsSeen = await db.tenant(a.accountId, (tx) =>
      rows<{ id: string }>(tx, sql`select id from accounts`),
    );
    assert.deepEqual(accountsSeen, [{ id: a.accountId }]);
  });

  test("fails closed: the request role without an account setting sees nothing and writes nothing", async () => {
    const a = await seedAccount(db);
    await db.admin(a.accountId, (tx) => replaceIcpCriteria(tx, a.accountId, { criteria: { who: "A" } }));
    const seen = await db.keyLookup("0".repeat(64), (tx) =>
      rows<{ n: number }>(tx, sql`select count(*)::int as n from icp_criteria`),
    );
    assert.deepEqual(seen, [{ n: 0 }]);
    await assert.rejects(
      db.keyLookup("0".repeat(64), (tx) =>
        tx.execute(sql`insert into icp_criteria (account_id, criteria) values (${a.accountId}, '{}')`),
      ),
      rlsViolation,
    );
  });

  test("a tenant cannot write rows of another account", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    await assert.rejects(
      db.tenant(a.accountId, (tx) => replaceIcpCriteria(tx, b.accountId, { criteria: { hijack: true } })),
      rlsViolation,
    );
  });

  test("key lookup sees exactly the presented key and its account", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    const key = await a.key(["read:icp"]);
    await b.key(["read:icp"]);
    const hash = hashApiKey(key);
    const found = await db.keyLookup(hash, (tx) => findKeyByHash(tx, hash));
    assert.equal(found?.account_id, a.accountId);
    assert.deepEqual(found?.scopes, ["read:icp"]);
    const visible = await db.keyLookup(hash, (tx) =>
      rows<{ n: number }>(tx, sql`select count(*)::int as n from api_keys`),
    );
    assert.deepEqual(visible, [{ n: 1 }]);
  });
});
