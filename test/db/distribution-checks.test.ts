/**
 * The two readers the distribution-readiness test (distribution-ready.test.ts) relies on, checked
 * on hand-written input: the join check on statements, the source reading on a file of queries.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { loadModule, parseSync } from "libpg-query";
import { sqlStatements } from "../helpers/sql-sources.ts";
import { TenantJoinCheck } from "../helpers/tenant-joins.ts";

before(async () => {
  await loadModule();
});

/** The statements sqlStatements reads from one source file, `src/<name>`, of a throwaway repository. */
function statementsOf(name: string, source: readonly string[]) {
  const root = mkdtempSync(join(tmpdir(), "ascribe-sql-"));
  try {
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", name), source.join("\n"));
    return sqlStatements(root, [join(root, "src")]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const flat = (variants: readonly string[] | undefined) => variants?.map((v) => v.replace(/\s+/g, " ").trim());

describe("distribution-readiness checks", () => {
  test("the query check names the tenant tables a statement leaves unpinned, and accepts pinned ones", () => {
    const tenant = new Set(["events", "contacts", "purchases"]);
    const verdict = (q: string) =>
      parseSync(q).stmts?.map(({ stmt }) => TenantJoinCheck.check(stmt, tenant).violation)[0];
    const unpinned = "account_id not equated between [events e] and [contacts c]";
    const cases: [string, string | null][] = [
      ["select 1 from events e join contacts c on c.id = e.contact_id where e.account_id = $1", unpinned],
      ["select 1 from events e join contacts c on c.id = e.contact_id and c.account_id = e.account_id", null],
      [
        "select 1 from events e join contacts c on c.account_id = $1 and c.id = e.contact_id where e.account_id = $1",
        null,
      ],
      ["select 1 from events e join contacts c on c.account_id = $2 where e.account_id = $1", unpinned],
      ["select 1 from events e join contacts c using (account_id, id)", null],
      [
        "select 1 from events e where e.account_id = $1 and exists (select 1 from contacts c where c.id = e.contact_id)",
        unpinned,
      ],
      [
        "select 1 from events e where exists (select 1 from contacts c where c.account_id = e.account_id)",
        null,
      ],
      ["select 1 from events e, contacts c where e.account_id = $1 or c.account_id = $1", unpinned],
      [
        "select 1 from events e left join lateral (select * from contacts c where c.account_id = e.account_id) x on true",
        null,
      ],
      [
        "update events e set contact_id = c.id from contacts c where c.email = e.contact_email and e.account_id = $1",
        unpinned,
      ],
      [
        "update events e set contact_id = c.id from contacts c where c.account_id = e.account_id and e.account_id = $1",
        null,
      ],
      [
        "insert into events (account_id, id) select $2, c.id from contacts c where c.account_id = $1",
        "account_id not equated between [events] and [contacts c]",
      ],
      [
        "insert into events (account_id, id) select c.account_id, c.id::text from contacts c where c.account_id = $1",
        null,
      ],
      [
        "with x as (select id from contacts where account_id = $1) select 1 from events e join x on x.id = e.contact_id",
        "account_id not equated between [contacts] and [events e]",
      ],
      [
        "with x as (select account_id, id from contacts) select 1 from events e join x using (account_id)",
        null,
      ],
      [
        "select 1 from events e where e.account_id = $1 union all select 1 from contacts c where c.account_id = $2",
        unpinned,
      ],
      [
        "select 1 from events e join purchases p on p.contact_id = e.contact_id",
        "account_id not equated between [events e] and [purchases p]",
      ],
    ];
    assert.deepEqual(
      cases.map(([q]) => verdict(q) ?? null),
      cases.map(([, expected]) => expected),
    );
  });
  test("the source reading inlines helpers, evaluates sql.raw and renders every branch", () => {
    const [statement, ...more] = statementsOf("joined.ts", [
      'import { sql } from "drizzle-orm";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is TypeScript source
      "const onContact = (alias: string) => sql.raw(`join contacts ${alias} on ${alias}.id = e.contact_id`);",
      "export function joined(db: Db, accountId: string, kind?: string) {",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is TypeScript source
      "  const pin = kind ? sql`and c.account_id = ${accountId}` : sql``;",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is TypeScript source
      '  return db.execute(sql`select 1 from events e ${onContact("c")} where e.account_id = ${accountId} ${pin}`);',
      "}",
    ]);
    assert.equal(more.length, 0);
    assert.deepEqual(flat(statement?.variants), [
      "select 1 from events e join contacts c on c.id = e.contact_id where e.account_id = $1 and c.account_id = $1",
      "select 1 from events e join contacts c on c.id = e.contact_id where e.account_id = $1",
    ]);
    assert.equal(statement?.file, "src/joined.ts");
    assert.equal(statement?.line, 5);
  });

  test("the source reading evaluates a column list spread from constant lists", () => {
    const [statement] = statementsOf("spread.ts", [
      'import { sql } from "drizzle-orm";',
      'const RECEIVED = [["id", "text"], ["event_type", "text"]] as const;',
      'const COUNTED = [["counted", "boolean"]] as const;',
      "const WRITTEN = [...RECEIVED, ...COUNTED];",
      'const names = WRITTEN.map(([name]) => name).join(", ");',
      "export function written(db: Db, accountId: string) {",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is TypeScript source
      "  return db.execute(sql`select ${sql.raw(names)} from events where account_id = ${accountId}`);",
      "}",
    ]);
    assert.deepEqual(flat(statement?.variants), [
      "select id, event_type, counted from events where account_id = $1",
    ]);
  });
});
