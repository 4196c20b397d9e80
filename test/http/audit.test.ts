import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Database, rows } from "../../src/db/client.ts";
import { createAuditWriter } from "../../src/http/audit.ts";
import { routes } from "../../src/routes/index.ts";
import { API_PREFIX } from "../../src/routes/route-def.ts";
import {
  bearer,
  createTestApp,
  openTestDatabase,
  sampleBody,
  seedAccount,
  seedAdRule,
  silentLogger,
} from "../helpers/harness.ts";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface AuditRow {
  key_id: string;
  method: string;
  path: string;
  scope: string;
  status: number;
  ip: string;
}

const auditOf = (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<AuditRow>(
      tx,
      sql`select key_id, method, path, scope, status, ip from audit_log where account_id = ${accountId} order by id`,
    ),
  );

const keyIdOf = async (accountId: string) =>
  db.admin(accountId, (tx) =>
    rows<{ id: string; last_used_at: Date | null }>(
      tx,
      sql`select id, last_used_at from api_keys where account_id = ${accountId}`,
    ),
  );

describe("audit log", () => {
  test("one row per authenticated request, with key, method, path, scope, status and IP; last_used_at set", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["read:icp"]);
    const [keyRow] = await keyIdOf(account.accountId);
    assert.equal(keyRow?.last_used_at, null);
    const app = await createTestApp(db);
    const sent = [
      { method: "GET" as const, url: "/api/v1/icp/criteria?x=1", status: 200 },
      { method: "PUT" as const, url: "/api/v1/icp", status: 403 },
      { method: "GET" as const, url: "/api/v1/icp/criteria", status: 200 },
    ];
    for (const s of sent) {
      const res = await app.inject({
        method: s.method,
        url: s.url,
        headers: bearer(key),
        remoteAddress: "203.0.113.7",
      });
      assert.equal(res.statusCode, s.status);
    }
    // Not authenticated: never audited.
    await app.inject({ url: "/api/v1/icp/criteria", remoteAddress: "203.0.113.7" });
    await app.inject({ url: "/api/v1" });
    await app.close();
    await app.audit.close();
    const keyId = keyRow?.id;
    assert.deepEqual(await auditOf(account.accountId), [
      {
        key_id: keyId,
        method: "GET",
        path: "/api/v1/icp/criteria",
        scope: "read:icp",
        status: 200,
        ip: "203.0.113.7",
      },
      {
        key_id: keyId,
        method: "PUT",
        path: "/api/v1/icp",
        scope: "write:icp",
        status: 403,
        ip: "203.0.113.7",
      },
      {
        key_id: keyId,
        method: "GET",
        path: "/api/v1/icp/criteria",
        scope: "read:icp",
        status: 200,
        ip: "203.0.113.7",
      },
    ]);
    const [used] = await keyIdOf(account.accountId);
    assert.ok(
      used?.last_used_at instanceof Date || typeof used?.last_used_at === "string",
      "last_used_at set",
    );
  });

  test("every write leaves its audit row: each write route and method, with its scope and status", async () => {
    const account = await seedAccount(db);
    const key = await account.key(["*"]);
    const app = await createTestApp(db);
    const expected: Omit<AuditRow, "key_id" | "ip">[] = [];
    for (const route of routes) {
      for (const method of route.methods.filter((m) => m !== "GET")) {
        const res = await app.inject({
          method,
          url: API_PREFIX + route.path,
          headers: { ...bearer(key), "content-type": "application/json" },
          payload: JSON.stringify(
            await sampleBody(route.path, { newRule: () => seedAdRule(db, account.accountId) }),
          ),
        });
        assert.equal(res.statusCode, 200, `${method} ${route.path}: ${res.body}`);
        expected.push({ method, path: API_PREFIX + route.path, scope: route.scope, status: 200 });
      }
    }
    await app.close();
    await app.audit.close();
    assert.ok(expected.length >= 12, "the write routes of the registry");
    assert.deepEqual(
      (await auditOf(account.accountId)).map(({ method, path, scope, status }) => ({
        method,
        path,
        scope,
        status,
      })),
      expected,
    );
  });

  test("audit rows equal requests made, across accounts, off the critical path", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    const keyA = await a.key(["read:icp"]);
    const keyB = await b.key(["read:icp"]);
    const app = await createTestApp(db);
    await Promise.all([
      ...Array.from({ length: 37 }, () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(keyA) })),
      ...Array.from({ length: 23 }, () => app.inject({ url: "/api/v1/icp/criteria", headers: bearer(keyB) })),
    ]);
    await app.close();
    await app.audit.close();
    assert.equal((await auditOf(a.accountId)).length, 37);
    assert.equal((await auditOf(b.accountId)).length, 23);
  });

  test("a failed write keeps the entries and writes them on the next flush", async () => {
    const account = await seedAccount(db);
    await account.key(["read:icp"]);
    const [keyRow] = await keyIdOf(account.accountId);
    if (!keyRow) throw new Error("no key");
    let calls = 0;
    // The same database, refusing the second audit transaction as an outage would: the first
    // chunk is written, the second kept.
    const flaky: Database = {
      ...db,
      tenant: (accountId, fn) => {
        calls += 1;
        if (calls === 2) return Promise.reject(new Error("connection lost"));
        return db.tenant(accountId, fn);
      },
    };
    const audit = createAuditWriter(flaky, silentLogger, { intervalMs: 60_000, chunkSize: 1 });
    const entry = {
      key_id: keyRow.id,
      method: "GET",
      path: "/api/v1/icp/criteria",
      scope: "read:icp",
      status: 200,
      ip: "198.51.100.1",
      occurred_at: new Date().toISOString(),
    };
    audit.record(account.accountId, entry);
    audit.record(account.accountId, { ...entry, status: 403 });
    await assert.rejects(audit.flush(), /connection lost/);
    assert.deepEqual(
      (await auditOf(account.accountId)).map((r) => r.status),
      [200],
    );
    await audit.close();
    assert.deepEqual(
      (await auditOf(account.accountId)).map((r) => r.status),
      [200, 403],
    );
  });
});
