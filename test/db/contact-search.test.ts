import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import pg from "pg";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { favourIndexOnlySift } from "../../src/queries/contact-search.ts";
import { contactsList, contactsListQuery } from "../../src/queries/contacts-list.ts";
import { journeysPage } from "../../src/queries/journeys-list.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * A search of /contacts walks the page's order first (a fragment many contacts hold fills the page
 * from its first contacts: scale 100, `search=a` 1.4 s → 15 ms) and falls back to the sift, which
 * tests every contact of the account by contacts_search_idx. Where the account is most of the table,
 * the planner at its default random_page_cost reads the heap instead, twice the work (scale 100, a
 * fragment nobody has: 75 → 42 ms p50); the search's statement prices index pages like the heap's.
 */

let db: Database & { url: string | null };
let accountId: string;
before(async () => {
  db = await openTestDatabase();
  ({ accountId } = await seedAccount(db));
  // 40,000 contacts as wide as the demo's (a form response each), then the statistics and the
  // visibility map an index-only scan needs.
  await db.admin(accountId, (tx) =>
    tx.execute(sql`
      insert into contacts (account_id, id, email, name, phone, form_response)
      select ${accountId}, gen_random_uuid(), 'person' || n || '@example.com', 'Person ' || n,
             '+1415555' || lpad(n::text, 5, '0'),
             jsonb_build_object('company', 'Company ' || n, 'budget', '$10k-$50k', 'role', 'Founder',
                                'notes', repeat('x', 120))
      from generate_series(1, 40000) as n`),
  );
  if (db.url) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("vacuum analyze contacts");
    await client.end();
  } else {
    await db.maintain({ afterBulkWrite: true });
  }
});
after(async () => {
  await db.close();
});

const setting = async (tx: Sql) =>
  (await rows<{ cost: string }>(tx, sql`select current_setting('random_page_cost') as cost`))[0]?.cost;

test("a search prices index pages like the heap's, for its request only", async () => {
  const seen = await db.read(accountId, async (tx) => {
    const before = await setting(tx);
    const found = await contactsList(tx, accountId, { search: "person12345@", limit: 10, offset: 0 });
    return { before, found: found.map((c) => c.email), during: await setting(tx) };
  });
  assert.deepEqual(seen, { before: "4", found: ["person12345@example.com"], during: "1.1" });
  const journeys = await db.read(accountId, async (tx) => {
    await journeysPage(tx, accountId, { search: "nobody", limit: 10, offset: 0 });
    return setting(tx);
  });
  assert.equal(journeys, "1.1");
  // Neither a page without a search nor the next request sees it.
  const plain = await db.read(accountId, async (tx) => {
    await contactsList(tx, accountId, { limit: 10, offset: 0 });
    return setting(tx);
  });
  assert.equal(plain, "4");
});

test("so the sift reads the account's index entries, where the default price reads its heap", async () => {
  const plan = (favoured: boolean) =>
    db.read(accountId, async (tx) => {
      if (favoured) await favourIndexOnlySift(tx);
      const lines = await rows<{ "QUERY PLAN": string }>(
        tx,
        sql`explain (costs off) ${contactsListQuery(accountId, { search: "zz-nobody", limit: 50, offset: 0 })}`,
      );
      return lines.map((l) => l["QUERY PLAN"]).join("\n");
    });
  const favoured = await plan(true);
  assert.match(favoured, /Index Only Scan using contacts_search_idx/, favoured);
  // PGlite's planner, with the statistics of its own maintenance pass, takes the index either way.
  if (db.url) {
    const priced = await plan(false);
    assert.doesNotMatch(priced, /Index Only Scan using contacts_search_idx/, priced);
  }
});

/** Every contact of the account in the page's order (no CRM event yet: by contact id, descending). */
async function allInPageOrder(): Promise<string[]> {
  const found = await db.admin(accountId, (tx) =>
    rows<{ email: string }>(
      tx,
      sql`select email from contacts where account_id = ${accountId} order by id desc`,
    ),
  );
  return found.map((r) => r.email);
}

test("pages of a fragment every contact holds follow one another, walked or sifted", async () => {
  // Pages up to 5,000 are found by the walk, the later ones by the sift (walkLength).
  const seen: string[] = [];
  for (let offset = 0; offset < 6_000; offset += 500) {
    const page = await db.read(accountId, (tx) =>
      contactsList(tx, accountId, { search: "PERSON", limit: 500, offset }),
    );
    assert.equal(page.length, 500, `offset ${offset}`);
    seen.push(...page.map((c) => c.email ?? ""));
  }
  assert.deepEqual(seen, (await allInPageOrder()).slice(0, 6_000));
});

test("a fragment the walk does not find enough of is sifted from every contact", async () => {
  const found = await db.read(accountId, (tx) =>
    contactsList(tx, accountId, { search: "person3999", limit: 50, offset: 0 }),
  );
  const expected = [
    "person3999@example.com",
    ...Array.from({ length: 10 }, (_, i) => `person3999${i}@example.com`),
  ];
  assert.deepEqual(
    found.map((c) => c.email),
    (await allInPageOrder()).filter((email) => expected.includes(email)),
  );
  assert.equal(found.length, 11);
});

test("a fragment the walk finds enough of never runs the sift", async () => {
  const analyzed = (search: string) =>
    db.read(accountId, async (tx) => {
      await favourIndexOnlySift(tx);
      const lines = await rows<{ "QUERY PLAN": string }>(
        tx,
        sql`explain (analyze, costs off, timing off, summary off) ${contactsListQuery(accountId, { search, limit: 50, offset: 0 })}`,
      );
      return lines.map((l) => l["QUERY PLAN"]).join("\n");
    });
  const common = await analyzed("person");
  assert.match(common, /contacts_search_idx.*\(never executed\)/, common);
  const rare = await analyzed("person3999");
  assert.match(rare, /contacts_search_idx/, rare);
  assert.doesNotMatch(rare, /contacts_search_idx.*\(never executed\)/, rare);
});

describe("/journeys' search, walked or sifted the same way", () => {
  before(async () => {
    // Seen once each, person40000 last: the journeys' order is person40000, person39999, … Written
    // after the maintenance pass, so that PGlite plans with statistics that say nobody was seen.
    await db.admin(accountId, (tx) =>
      tx.execute(sql`
        update contact_activity a
        set first_seen_at = t.at, last_seen_at = t.at
        from (select id, timestamptz '2026-01-01 00:00:00+00'
                         + substring(email from 'person([0-9]+)@')::int * interval '1 second' as at
              from contacts where account_id = ${accountId}) t
        where a.account_id = ${accountId} and a.contact_id = t.id`),
    );
  });
  const emails = (search: string, offset: number, limit: number) =>
    db.read(accountId, async (tx) =>
      (await journeysPage(tx, accountId, { search, limit, offset })).map((j) => j.contact.email),
    );

  test("pages of a fragment every contact holds follow one another, walked or sifted", async () => {
    const seen: (string | null)[] = [];
    for (let offset = 0; offset < 6_000; offset += 500) seen.push(...(await emails("PERSON", offset, 500)));
    assert.deepEqual(
      seen,
      Array.from({ length: 6_000 }, (_, i) => `person${40_000 - i}@example.com`),
    );
  });

  test("a fragment the walk does not find enough of is sifted", async () => {
    assert.deepEqual(await emails("person3999", 0, 50), [
      ...Array.from({ length: 10 }, (_, i) => `person3999${9 - i}@example.com`),
      "person3999@example.com",
    ]);
  });
});
