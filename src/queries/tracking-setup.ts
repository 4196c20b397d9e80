import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface TrackingSetupRow {
  /** What the tag's `data-client` carries. */
  client_key: string;
  /** The account's first-party tracking hosts, by name. */
  hosts: string[];
}

/** What Settings → tracking shows of an account: its client key and its tracking hosts. */
export async function trackingSetup(db: Sql, accountId: string): Promise<TrackingSetupRow | null> {
  const found = await rows<TrackingSetupRow>(
    db,
    sql`
      select
        a.client_key as client_key,
        array(
          select h.host from tracking_hosts h where h.account_id = a.id order by h.host
        ) as hosts
      from accounts a
      where a.id = ${accountId}`,
    { prepare: true },
  );
  return found[0] ?? null;
}
