import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { describeError } from "../../src/admin/describe-error.ts";
import { buildApp } from "../../src/app.ts";
import type { Database } from "../../src/db/client.ts";
import { describeQueryFailure, queryFailureOf, withoutBoundValues } from "../../src/db/query-error.ts";
import { createAuditWriter } from "../../src/http/audit.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { writeWithRetry } from "../../src/import/batch-runner.ts";
import { createLogger } from "../../src/logger.ts";
import { keyStoreFor } from "../../src/main.ts";
import { defineRoute } from "../../src/routes/route-def.ts";
import {
  bearer,
  createTestFiles,
  openTestDatabase,
  seedAccount,
  silentLogger,
  TEST_SITE_URL,
  testSecrets,
} from "../helpers/harness.ts";

const EMAIL = "alice.secret@example.com";
const NAME = "Alice Secretname";

/** Every line a logger wrote, as text. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => lines.join("") };
}

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

/** A statement the database refuses, quoting the bound email in its message. */
const badCast = () =>
  db.admin(null, (tx) => tx.execute(sql`select ${EMAIL}::int as n, ${NAME}::text as name`));
/** A unique violation whose detail holds the email: `Key (email)=(alice…) already exists`. */
const duplicate = () =>
  db.admin(null, async (tx) => {
    await tx.execute(
      sql`create temporary table people_probe (email text primary key, name text) on commit drop`,
    );
    await tx.execute(sql`insert into people_probe values (${EMAIL}, ${NAME})`);
    await tx.execute(sql`insert into people_probe values (${EMAIL}, ${NAME})`);
  });

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error("the statement did not fail");
}

describe("failed queries are told without their bound values", () => {
  test("the raw error does hold them (what this guards against)", async () => {
    const err = await failureOf(badCast);
    assert.match(String((err as Error).message), /alice\.secret@example\.com/);
  });

  test("its value-free fields: code, reason with the quoted value cut, statement with placeholders", async () => {
    const cast = queryFailureOf(await failureOf(badCast));
    assert.deepEqual(cast, {
      code: "22P02",
      reason: 'invalid input syntax for type integer: "…"',
      table: null,
      column: null,
      constraint: null,
      statement: "select $1::int as n, $2::text as name",
    });
    const dup = queryFailureOf(await failureOf(duplicate));
    assert.equal(dup?.code, "23505");
    assert.equal(dup?.constraint, "people_probe_pkey");
    assert.equal(dup?.table, "people_probe");
    assert.equal(dup?.statement, "insert into people_probe values ($1, $2)");
    assert.equal(
      describeQueryFailure(dup ?? assert.fail()),
      'database error 23505: duplicate key value violates unique constraint "people_probe_pkey" (table people_probe, constraint people_probe_pkey)',
    );
    assert.equal(queryFailureOf(new Error("not a query")), null);
    assert.equal(queryFailureOf(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })), null);
  });

  for (const logFormat of ["json", "pretty"] as const) {
    test(`the logger (${logFormat}) writes the code, table and statement, never the values`, async () => {
      const out = capture();
      const logger = createLogger({ logLevel: "info", logFormat }, out.stream);
      logger.error({ err: await failureOf(badCast) }, "request failed");
      logger.error({ err: await failureOf(duplicate) }, "audit flush failed");
      logger.error({ err: new Error("plain failure") }, "other");
      const text = out.text();
      assert.doesNotMatch(text, /alice|Secretname|params/i);
      assert.match(text, /22P02/);
      assert.match(text, /23505/);
      assert.match(text, /people_probe_pkey/);
      assert.match(text, /select \$1::int as n/);
      assert.match(text, /plain failure/);
    });
  }

  test("a handler's failed query: 502 to the client, a log line without the values", async () => {
    const out = capture();
    const logger = createLogger({ logLevel: "info", logFormat: "json" }, out.stream);
    const failing = defineRoute({
      methods: ["GET"],
      path: "/icp/criteria",
      scope: "read:icp",
      input: z.object({}),
      output: z.object({}),
      description: "fails",
      handler: async ({ tx }) => {
        await tx.execute(sql`select ${EMAIL}::int`);
        return {};
      },
    });
    const audit = createAuditWriter(db, silentLogger, { intervalMs: 50 });
    const app = await buildApp({
      db,
      secrets: testSecrets,
      keys: keyStoreFor(db),
      counters: createMemoryCounterStore(),
      audit,
      logger,
      routes: [failing],
      files: createTestFiles(),
      siteUrl: () => TEST_SITE_URL,
    });
    try {
      const key = await (await seedAccount(db)).key(["*"]);
      const res = await app.inject({ url: "/api/v1/icp/criteria", headers: bearer(key) });
      assert.deepEqual([res.statusCode, res.json()], [502, { error: "upstream_error" }]);
      const line = out
        .text()
        .split("\n")
        .find((l) => l.includes('"request failed"'));
      assert.ok(line, out.text());
      assert.doesNotMatch(line, /alice/);
      const logged = JSON.parse(line).err;
      assert.equal(logged.code, "22P02");
      assert.equal(logged.statement, "select $1::int");
    } finally {
      await app.close();
      await audit.close();
    }
  });

  test("an import that fails on the database stops with one line, no statement, no rows", async () => {
    const batch = [{ line: 2, record: { email: EMAIL, name: NAME } }];
    const err = await failureOf(() =>
      writeWithRetry(batch, async () => {
        await duplicate();
        return { imported: 0, updated: 0, skipped: 0 };
      }),
    );
    const message = String((err as Error).message);
    assert.equal(
      message,
      'database error 23505: duplicate key value violates unique constraint "people_probe_pkey" (table people_probe, constraint people_probe_pkey)',
    );
    assert.doesNotMatch(String((err as Error).stack), /alice/);
    assert.equal(withoutBoundValues(new Error("kept")) instanceof Error, true);
  });

  test("any CLI command's refusal line (describeError) tells a failed query without its values", async () => {
    const message = describeError(await failureOf(duplicate));
    assert.equal(
      message,
      'database error 23505: duplicate key value violates unique constraint "people_probe_pkey" (table people_probe, constraint people_probe_pkey)',
    );
    assert.doesNotMatch(describeError(await failureOf(badCast)), /alice|Secretname/);
    assert.equal(describeError(new Error("no such account")), "no such account");
  });
});
