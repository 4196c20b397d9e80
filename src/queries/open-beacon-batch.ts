import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface VisitorContacts {
  /** Visitor → the contact of its latest touchpoint that has one (visitors without one are absent). */
  contacts: Map<string, string>;
  /** Visitors with at least one touchpoint without a contact: the ones a new contact has to adopt. */
  anonymous: Set<string>;
}

export interface OpenedBeaconBatch {
  /** The beacon ids this transaction claimed (see below). */
  claimed: Set<string>;
  /** The account's ad catalog version (`adCatalogVersion`), for the ad index cache. */
  adCatalogVersion: string;
  /** What the visitors asked about were before the batch. */
  visitors: VisitorContacts;
}

/**
 * What a batch of beacons learns before it writes anything, in one statement: under load each round
 * trip of a batch costs about as much again as the database's work for it (the answer waits its turn
 * on a busy event loop), so the three questions travel together.
 *
 * - **Claimed ids.** The beacon ids recorded as stored (`beacon_receipts`), returned when this call
 *   claimed them. An id the account already holds is left out, and so is one that a concurrent
 *   transaction holds until it commits (its insert waits on the key; if that transaction rolls back,
 *   this one claims it). Ids are inserted in sorted order, so two batches claiming the same ids never
 *   wait on each other in a cycle.
 * - **The ad catalog's version**, one row by key; "0" for an account whose ads were never written
 *   since migration 0039.
 * - **What some visitors were before the batch**: the contact each already became, and whether it has
 *   anonymous touchpoints left. Both by `touchpoints_visitor_idx`, one index range per visitor, so
 *   that the adoption (`adoptVisitors`, an UPDATE whose statement triggers recompute what it touches)
 *   runs only for the visitors that have something to adopt. The anonymity test is a scalar subquery
 *   with LIMIT 1, not EXISTS: PostgreSQL plans an uncorrelatable EXISTS here as one hashed scan of
 *   every anonymous touchpoint of the account, a cost per batch that grew with the account (measured).
 *
 * The visitors are read before the contacts of the batch are resolved, which writes contacts only.
 */
export async function openBeaconBatch(
  db: Sql,
  accountId: string,
  params: { receipts: readonly { beaconId: string; receivedAt: Date }[]; visitorIds: readonly string[] },
): Promise<OpenedBeaconBatch> {
  // One row per id, with its first copy's time.
  const first = new Map<string, Date>();
  for (const r of params.receipts) if (!first.has(r.beaconId)) first.set(r.beaconId, r.receivedAt);
  const receipts = JSON.stringify(
    [...first].map(([beacon_id, at]) => ({ beacon_id, received_at: at.toISOString() })),
  );
  // json, not arrays: both drivers hand it back parsed, whatever their array parsers.
  const [opened] = await rows<{
    claimed: string[];
    ad_catalog_version: string | null;
    visitors: [visitorId: string, contactId: string | null, anonymous: boolean][];
  }>(
    db,
    sql`
      with claimed as (
        insert into beacon_receipts (account_id, beacon_id, received_at)
        select ${accountId}, r.beacon_id, r.received_at
        from jsonb_to_recordset(${receipts}::jsonb) as r(beacon_id text, received_at timestamptz)
        order by r.beacon_id
        on conflict (account_id, beacon_id) do nothing
        returning beacon_id
      )
      select
        (select coalesce(json_agg(c.beacon_id), '[]') from claimed c) as claimed,
        (select v.version::text from ad_catalog_versions v where v.account_id = ${accountId})
          as ad_catalog_version,
        (select coalesce(json_agg(json_build_array(
            w.visitor_id,
            (select t.contact_id from touchpoints t
             where t.account_id = ${accountId} and t.visitor_id = w.visitor_id and t.contact_id is not null
             order by t.occurred_at desc limit 1),
            coalesce((select true from touchpoints t
                      where t.account_id = ${accountId} and t.visitor_id = w.visitor_id
                        and t.contact_id is null
                      limit 1), false))), '[]')
         from jsonb_array_elements_text(${JSON.stringify(params.visitorIds)}::jsonb) as w(visitor_id))
          as visitors`,
    { prepare: true },
  );
  if (!opened) throw new Error("the batch's opening statement returned no row");
  const contacts = new Map<string, string>();
  const anonymous = new Set<string>();
  for (const [visitorId, contactId, isAnonymous] of opened.visitors) {
    if (contactId !== null) contacts.set(visitorId, contactId);
    if (isAnonymous) anonymous.add(visitorId);
  }
  return {
    claimed: new Set(opened.claimed),
    adCatalogVersion: opened.ad_catalog_version ?? "0",
    visitors: { contacts, anonymous },
  };
}
