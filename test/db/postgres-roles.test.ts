import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import pino from "pino";
import { loadConfig } from "../../src/config.ts";
import { type RunningService, startService } from "../../src/main.ts";
import { openDatabase } from "../../src/open-infrastructure.ts";

// Roles and grants exist on PostgreSQL only: the embedded leg skips this, and CI's PostgreSQL leg
// (.ci/run sets DATABASE_URL) runs it.
const serverUrl = process.env.DATABASE_URL;
const skip = serverUrl ? false : "PostgreSQL only (DATABASE_URL)";

const OPERATIONS = new URL("../../docs/operations.md", import.meta.url);

/** The SQL block of "PostgreSQL: roles and grants" in docs/operations.md, exactly as a self-hoster pastes it. */
function documentedSql(): string {
  const doc = readFileSync(OPERATIONS, "utf8");
  const section = doc.split(/^## /m).find((s) => s.startsWith("PostgreSQL: roles and grants"));
  const block = section?.match(/```sql\n([\s\S]*?)```/);
  if (!block?.[1])
    throw new Error("docs/operations.md has no SQL block under 'PostgreSQL: roles and grants'");
  return block[1];
}

/**
 * What psql does with the block: `\set` lines define variables (here replaced by `names`, the
 * test's own), `:"name"` is the quoted identifier and `:'name'` the quoted literal; each statement
 * ends its line with a semicolon.
 */
function psqlStatements(script: string, names: Record<string, string>): string[] {
  const defined = new Set<string>();
  const statements: string[] = [];
  let current = "";
  for (const line of script.split("\n")) {
    const set = line.match(/^\\set (\w+) /);
    if (set?.[1]) {
      defined.add(set[1]);
      continue;
    }
    if (line.startsWith("--") || line.trim() === "") continue;
    current += `${line}\n`;
    if (line.trimEnd().endsWith(";")) {
      statements.push(current);
      current = "";
    }
  }
  assert.equal(current.trim(), "", "the block ends with a complete statement");
  assert.deepEqual([...defined].sort(), Object.keys(names).sort(), "the test names every variable");
  return statements.map((s) =>
    s.replace(/:(["'])(\w+)\1/g, (_, quote: string, name: string) => {
      const value = names[name];
      if (value === undefined) throw new Error(`undefined psql variable ${name}`);
      return quote === '"' ? `"${value.replaceAll('"', '""')}"` : `'${value.replaceAll("'", "''")}'`;
    }),
  );
}

function urlFor(user: string, password: string, database: string): string {
  const url = new URL(serverUrl ?? "");
  url.username = user;
  url.password = password;
  url.pathname = `/${database}`;
  return url.toString();
}

describe("PostgreSQL: the documented roles and grants", { skip }, () => {
  // Roles are cluster-wide and the server is shared by parallel runs: names of this run only.
  const suffix = `${process.pid}_${randomUUID().slice(0, 8)}`;
  const names = {
    owner: `ascribe_owner_${suffix}`,
    owner_password: randomBytes(12).toString("base64url"),
    login: `ascribe_web_${suffix}`,
    login_password: randomBytes(12).toString("base64url"),
    database: `ascribe_roles_${suffix}`,
  };
  let superuser: pg.Client;
  let dataDir: string;
  let service: RunningService | null = null;

  before(async () => {
    superuser = new pg.Client({ connectionString: serverUrl });
    await superuser.connect();
    dataDir = await mkdtemp(join(tmpdir(), "ascribe-roles-"));
  });

  after(async () => {
    await service?.stop().catch(() => {});
    if (!superuser) return;
    await superuser.query(`drop database if exists "${names.database}" with (force)`).catch(() => {});
    for (const role of [names.login, names.owner]) {
      // The parameter grant is cluster-wide: DROP OWNED (run in any database) takes it back.
      await superuser.query(`drop owned by "${role}"`).catch(() => {});
      await superuser.query(`drop role if exists "${role}"`);
    }
    await superuser.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  test("the owner migrates, the login serves an API request and a beacon, and cannot change the schema", async () => {
    for (const statement of psqlStatements(documentedSql(), names)) await superuser.query(statement);
    const ownerUrl = urlFor(names.owner, names.owner_password, names.database);
    const loginUrl = urlFor(names.login, names.login_password, names.database);

    const owner = await openDatabase(loadConfig({ DATABASE_URL: ownerUrl }));
    await owner.migrate(); // what `ascribe migrate` runs
    await owner.close();

    const env = {
      DATABASE_URL: loginUrl,
      DATA_DIR: dataDir,
      PORT: "0",
      RULES_INTERVAL_SECONDS: "0",
      ASCRIBE_SECRET_KEYS: `t:${Buffer.alloc(32, 7).toString("base64")}`,
    };
    // `ascribe serve`: checks the migrations, then (an empty instance) seeds the demo account as the login.
    service = await startService(loadConfig(env), pino({ level: "silent" }));
    assert.ok(service.demoKey && service.demo, "the demo account was seeded through the login");

    const { demoKey, demo } = service;
    const contacts = await fetch(`${service.baseUrl}/contacts?limit=1`, {
      headers: { authorization: `Bearer ${demoKey}` },
    });
    assert.equal(contacts.status, 200, await contacts.clone().text());
    assert.equal(
      ((await contacts.json()) as { data: unknown[] }).data.length,
      1,
      "the demo's contacts, read by the request role",
    );

    const inDatabase = new pg.Client({
      connectionString: urlFor(superuser.user ?? "postgres", "", names.database),
    });
    await inDatabase.connect();
    try {
      const [account] = (
        await inDatabase.query<{ client_key: string }>("select client_key from accounts where id = $1", [
          demo.accountId,
        ])
      ).rows;
      assert.ok(account);
      const beacon = await fetch(`${service.siteUrl}/api/collect`, {
        method: "POST",
        headers: { "content-type": "text/plain;charset=UTF-8" },
        body: JSON.stringify({
          type: "page_view",
          client_key: account.client_key,
          id: `roles-test-${suffix}`,
          visitor_id: `visitor-${suffix}`,
          url: "https://example.com/landing?utm_source=facebook",
        }),
      });
      assert.equal(beacon.status, 204, await beacon.text());
      const stored = await inDatabase.query(
        "select 1 from touchpoints where account_id = $1 and visitor_id = $2",
        [demo.accountId, `visitor-${suffix}`],
      );
      assert.equal(stored.rowCount, 1, "the beacon's page view is stored");
    } finally {
      await inDatabase.end();
    }

    // The login owns nothing: no table of its own, none of the owner's to drop.
    const login = new pg.Client({ connectionString: loginUrl });
    await login.connect();
    try {
      await assert.rejects(login.query("create table intruder (id int)"), { code: "42501" });
      await assert.rejects(login.query("drop table touchpoints"), { code: "42501" });
    } finally {
      await login.end();
    }
  });
});
