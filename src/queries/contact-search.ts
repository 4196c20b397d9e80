import { type Sql, sessionSetting } from "../db/client.ts";

/**
 * For a statement that sifts the account's contacts by `contacts_search_idx` (a search of
 * `/contacts` or `/journeys`): index pages priced like the heap's. At the default
 * `random_page_cost` (4, a spinning disk's) the planner reads an account that is most of the table
 * from the heap, twice the work of its narrow index entries (scale 100, 210,000 contacts, a
 * fragment nobody has: 75 ms p50 against 42 ms). 1.1 is the usual price where the data sits in
 * memory or on SSD; it lasts for this statement's request only (sessionSetting).
 */
export async function favourIndexOnlySift(db: Sql): Promise<void> {
  await sessionSetting(db, "random_page_cost", "1.1");
}

/**
 * How far a search walks the page's order before it falls back to the sift: twice the contacts up
 * to the page's end, at least 1,000; no walk past 10,000 (each contact walked costs about 15 µs,
 * the sift ~0.3 µs an entry: scale 100, a rare fragment on a deep page paid 290 ms for a walk of
 * 20,000 before its sift).
 */
export function walkLength(page: { limit: number; offset: number }): number {
  const walk = Math.max(1_000, 2 * (page.offset + page.limit));
  return walk > 10_000 ? 0 : walk;
}
