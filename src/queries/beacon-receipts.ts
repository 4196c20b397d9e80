import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Records beacon ids as stored, in the caller's transaction; returns the ids this call claimed. An id
 * the account already holds is left out, and so is one that a concurrent transaction holds until it
 * commits (its insert waits on the key; if that transaction rolls back, this one claims it). Ids are
 * inserted in sorted order, so two batches claiming the same ids never wait on each other in a cycle.
 */
export async function claimBeaconIds(
  db: Sql,
  accountId: string,
  receipts: readonly { beaconId: string; receivedAt: Date }[],
): Promise<Set<string>> {
  if (receipts.length === 0) return new Set();
  // One row per id, with its first copy's time.
  const first = new Map<string, Date>();
  for (const r of receipts) if (!first.has(r.beaconId)) first.set(r.beaconId, r.receivedAt);
  const batch = JSON.stringify(
    [...first].map(([beacon_id, at]) => ({ beacon_id, received_at: at.toISOString() })),
  );
  const claimed = await rows<{ beacon_id: string }>(
    db,
    sql`
      insert into beacon_receipts (account_id, beacon_id, received_at)
      select ${accountId}, r.beacon_id, r.received_at
      from jsonb_to_recordset(${batch}::jsonb) as r(beacon_id text, received_at timestamptz)
      order by r.beacon_id
      on conflict (account_id, beacon_id) do nothing
      returning beacon_id`,
    { prepare: true },
  );
  return new Set(claimed.map((r) => r.beacon_id));
}
