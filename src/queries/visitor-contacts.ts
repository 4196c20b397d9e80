import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface VisitorContacts {
  /** Visitor → the contact of its latest touchpoint that has one (visitors without one are absent). */
  contacts: Map<string, string>;
  /** Visitors with at least one touchpoint without a contact: the ones a new contact has to adopt. */
  anonymous: Set<string>;
}

/**
 * What some visitors were before a batch: the contact each already became, and whether it has
 * anonymous touchpoints left. Both by `touchpoints_visitor_idx`, one index range per visitor, so that
 * the adoption (`adoptVisitors`, an UPDATE whose statement triggers recompute what it touches) runs
 * only for the visitors that have something to adopt. The anonymity test is a scalar subquery with
 * LIMIT 1, not EXISTS: PostgreSQL plans an uncorrelatable EXISTS here as one hashed scan of every
 * anonymous touchpoint of the account, a cost per batch that grew with the account (measured).
 */
export async function visitorContacts(
  db: Sql,
  accountId: string,
  params: { visitorIds: readonly string[] },
): Promise<VisitorContacts> {
  const found = await rows<{ visitor_id: string; contact_id: string | null; anonymous: boolean }>(
    db,
    sql`
      select v.visitor_id,
             (select t.contact_id from touchpoints t
              where t.account_id = ${accountId} and t.visitor_id = v.visitor_id and t.contact_id is not null
              order by t.occurred_at desc limit 1) as contact_id,
             coalesce((select true from touchpoints t
                       where t.account_id = ${accountId} and t.visitor_id = v.visitor_id
                         and t.contact_id is null
                       limit 1), false) as anonymous
      from jsonb_array_elements_text(${JSON.stringify(params.visitorIds)}::jsonb) as v(visitor_id)`,
    { prepare: true },
  );
  const contacts = new Map<string, string>();
  const anonymous = new Set<string>();
  for (const r of found) {
    if (r.contact_id !== null) contacts.set(r.visitor_id, r.contact_id);
    if (r.anonymous) anonymous.add(r.visitor_id);
  }
  return { contacts, anonymous };
}
