/**
 * Keeps the way to sharding by account open (docs/scaling.md, Citus with `account_id` as the
 * distribution column). Read from the migrated database itself (pg_catalog), not from the
 * migration files: what PostgreSQL holds is what a distribution would meet.
 *
 * A tenant table is one with an `account_id` column and forced row-level security (every such
 * table gets both from `ascribe_enforce_tenancy`, migration 0001), except the few listed below as
 * reference tables, each with its reason. Tenant tables would be distributed by account_id: their
 * primary key, unique constraints and unique indexes must lead with it (a shard can only enforce
 * uniqueness of keys that contain the distribution column), foreign keys between them must pair
 * account_id with account_id, leading on both sides (co-located), and no reference table may
 * point at one. Every statement in src/ and in the database's functions that reads or writes more
 * than one tenant table must pin them all to one account (see test/helpers/tenant-joins.ts): such
 * a statement runs on a single node.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { loadModule, parseSync } from "libpg-query";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { type FunctionSource, functionStatements } from "../helpers/function-statements.ts";
import { openTestDatabase } from "../helpers/harness.ts";
import { sqlStatements } from "../helpers/sql-sources.ts";
import { TenantJoinCheck } from "../helpers/tenant-joins.ts";

/** Tables that would be Citus reference tables (copied to every node), and why. */
const REFERENCE_TABLES: Record<string, string> = {
  accounts: "the tenants themselves: read by every request's key lookup and joined to tenant rows",
  users: "people are global: one person belongs to several accounts (members)",
  user_tokens: "a person's sign-in links, found by token hash before any account is known",
  web_sessions: "a person's browser sessions, found by session hash before any account is known",
  service_state: "the service's own settings, no account at all",
  tracking_hosts:
    "a host names its account before the account is known (beacons), so it is unique across accounts; a few rows per account",
};

const ROOT = join(import.meta.dirname, "..", "..");

let db: Database;
let tenantTables: Set<string>;

before(async () => {
  await loadModule();
  db = await openTestDatabase();
  tenantTables = new Set(
    (
      await db.admin(null, (tx) =>
        rows<{ table: string }>(
          tx,
          sql`
          select c.relname as table from pg_class c
          where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
            and c.relrowsecurity and c.relforcerowsecurity
            and exists (select 1 from pg_attribute a
                        where a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped)`,
        ),
      )
    )
      .map((r) => r.table)
      .filter((t) => !(t in REFERENCE_TABLES)),
  );
});
after(async () => {
  await db?.close();
});

/** Primary keys, unique constraints and unique indexes of tenant tables not led by account_id. */
async function uniqueViolations(tx: Sql, tenant: Set<string>): Promise<string[]> {
  const found = await rows<{ table: string; index: string; primary: boolean; first: string | null }>(
    tx,
    sql`
    select c.relname as table, ic.relname as index, i.indisprimary as primary,
           (select a.attname from pg_attribute a
            where a.attrelid = c.oid and a.attnum = i.indkey[0] and i.indkey[0] <> 0) as first
    from pg_index i
    join pg_class c on c.oid = i.indrelid
    join pg_class ic on ic.oid = i.indexrelid
    where c.relnamespace = 'public'::regnamespace and i.indisunique
    order by 1, 2`,
  );
  const withPrimary = new Set(found.filter((f) => f.primary).map((f) => f.table));
  return [
    ...[...tenant].filter((t) => !withPrimary.has(t)).map((t) => `${t}: no primary key`),
    ...found
      .filter((f) => tenant.has(f.table) && f.first !== "account_id")
      .map(
        (f) =>
          `${f.table}.${f.index}: ${f.primary ? "primary key" : "unique"} led by ${f.first ?? "an expression"}`,
      ),
  ];
}

/** Foreign keys that a distribution by account could not keep. */
async function foreignKeyViolations(tx: Sql, tenant: Set<string>): Promise<string[]> {
  const found = await rows<{ table: string; name: string; target: string; from: string[]; to: string[] }>(
    tx,
    sql`
    select c.relname as table, k.conname as name, r.relname as target,
           array(select a.attname::text from unnest(k.conkey) with ordinality u(n, i)
                 join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n order by u.i) as from,
           array(select a.attname::text from unnest(k.confkey) with ordinality u(n, i)
                 join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.n order by u.i) as to
    from pg_constraint k
    join pg_class c on c.oid = k.conrelid
    join pg_class r on r.oid = k.confrelid
    where k.contype = 'f' and k.connamespace = 'public'::regnamespace
    order by 1, 2`,
  );
  const out: string[] = [];
  for (const k of found) {
    const name = `${k.table}.${k.name} (${k.from.join(", ")}) → ${k.target} (${k.to.join(", ")})`;
    if (!tenant.has(k.table) && tenant.has(k.target))
      out.push(`${name}: a reference table points at a tenant table`);
    if (
      tenant.has(k.table) &&
      tenant.has(k.target) &&
      (k.from[0] !== "account_id" || k.to[0] !== "account_id")
    ) {
      out.push(`${name}: not account_id to account_id, leading`);
    }
  }
  return out;
}

/** Each statement's violation, `where: reason`, and how many statements join tenant tables. */
function joinViolations(statements: { where: string; sql: string }[]): {
  violations: string[];
  joining: number;
} {
  const violations: string[] = [];
  let joining = 0;
  for (const s of statements) {
    let parsed: { stmts?: { stmt?: unknown }[] };
    try {
      parsed = parseSync(s.sql);
    } catch (err) {
      violations.push(
        `${s.where}: cannot be parsed (${(err as Error).message}): ${s.sql.trim().slice(0, 120)}`,
      );
      continue;
    }
    for (const { stmt } of parsed.stmts ?? []) {
      const { tables, violation } = TenantJoinCheck.check(stmt, tenantTables);
      if (tables > 1) joining += 1;
      if (violation) violations.push(`${s.where}: ${violation}`);
    }
  }
  return { violations, joining };
}

describe("ready to distribute by account", () => {
  test("the tables that are not tenant tables are the listed reference tables", async () => {
    const all = await db.admin(null, (tx) =>
      rows<{ table: string }>(
        tx,
        sql`select relname as table from pg_class
            where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') order by 1`,
      ),
    );
    const others = all.map((r) => r.table).filter((t) => !tenantTables.has(t));
    assert.deepEqual(
      others,
      Object.keys(REFERENCE_TABLES).sort(),
      "a new shared table: list it with its reason",
    );
    assert.ok(tenantTables.has("events") && tenantTables.has("contacts") && tenantTables.size >= 30);
  });

  test("every tenant table's primary key, unique constraints and unique indexes lead with account_id", async () => {
    assert.deepEqual(await db.admin(null, (tx) => uniqueViolations(tx, tenantTables)), []);
  });

  test("foreign keys between tenant tables pair account_id first; none from a reference table to a tenant table", async () => {
    assert.deepEqual(await db.admin(null, (tx) => foreignKeyViolations(tx, tenantTables)), []);
  });

  test("the schema checks name a table that breaks them", async () => {
    const rolledBack = new Error("rolled back");
    await assert.rejects(
      db.admin(null, async (tx) => {
        await tx.execute(sql`
          create table zz_parent (account_id uuid not null references accounts (id), code text not null,
            primary key (code, account_id), unique (code))`);
        await tx.execute(sql`
          create table zz_child (account_id uuid not null, code text not null, primary key (account_id, code),
            foreign key (code, account_id) references zz_parent (code, account_id))`);
        await tx.execute(sql`create unique index zz_child_lower_uq on zz_child (lower(code))`);
        await tx.execute(sql`alter table accounts add column zz_code text`);
        await tx.execute(
          sql`alter table accounts add foreign key (id, zz_code) references zz_child (account_id, code)`,
        );
        await tx.execute(sql`select ascribe_enforce_tenancy()`);
        const tenant = new Set([...tenantTables, "zz_parent", "zz_child"]);
        assert.deepEqual(await uniqueViolations(tx, tenant), [
          "zz_child.zz_child_lower_uq: unique led by an expression",
          "zz_parent.zz_parent_code_key: unique led by code",
          "zz_parent.zz_parent_pkey: primary key led by code",
        ]);
        assert.deepEqual(await foreignKeyViolations(tx, tenant), [
          "accounts.accounts_id_zz_code_fkey (id, zz_code) → zz_child (account_id, code): a reference table points at a tenant table",
          "zz_child.zz_child_code_account_id_fkey (code, account_id) → zz_parent (code, account_id): not account_id to account_id, leading",
        ]);
        throw rolledBack;
      }),
      (err) => err === rolledBack,
    );
  });

  test("every statement in src/ that touches several tenant tables pins them to one account", () => {
    const statements = sqlStatements(ROOT, [join(ROOT, "src")]).flatMap((s) =>
      s.variants.map((v, i) => ({
        where: `${s.file}:${s.line}${s.variants.length > 1 ? ` (variant ${i + 1} of ${s.variants.length})` : ""}`,
        sql: v,
      })),
    );
    const { violations, joining } = joinViolations(statements);
    assert.deepEqual(violations, []);
    // The check sees the queries: over a hundred statements, dozens joining tenant tables.
    assert.ok(statements.length > 100, `${statements.length} statements`);
    assert.ok(joining > 20, `${joining} statements join tenant tables`);
  });

  test("every statement of the database's functions that touches several tenant tables pins them to one account", async () => {
    const fns = await db.admin(null, (tx) =>
      rows<FunctionSource>(
        tx,
        sql`
        select p.proname as name, l.lanname as language, p.prosrc as body,
               pg_get_functiondef(p.oid) as definition
        from pg_proc p join pg_language l on l.oid = p.prolang
        where p.pronamespace = 'public'::regnamespace and p.prokind = 'f'
        order by 1`,
      ),
    );
    const { statements, unreadable } = functionStatements(fns);
    assert.deepEqual(unreadable, []);
    const { violations, joining } = joinViolations(
      statements.map((s) => ({ where: `function ${s.fn}`, sql: s.sql })),
    );
    assert.deepEqual(violations, []);
    assert.ok(joining > 5, `${joining} function statements join tenant tables`);
  });
});
